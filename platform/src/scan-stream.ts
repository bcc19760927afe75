/**
 * The durable scan pipeline with TRANSPORT=nats (docs/decisions.md §5): the SCANS stream, its
 * publisher (resolver side) and its durable consumer (analytics side). Its own entry (like
 * bus-nats.ts), so importing proto never pulls `nats`.
 */
export * from './scan-stream-config'
export { createJetStreamScanPublisher, type JetStreamPublisherOptions } from './scan-stream-publisher'
export { createJetStreamScanSource, type JetStreamSourceOptions } from './scan-stream-source'
