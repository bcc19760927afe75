/**
 * The durable scan pipeline with TRANSPORT=nats (docs/decisions.md §5): the SCAN_BATCHES stream,
 * its publisher (resolver side) and its durable consumer (analytics side), and the relay that
 * keeps the public SCANS stream one scan per message. Its own entry (like bus-nats.ts), so
 * importing proto never pulls `nats`.
 */
export * from './scan-stream-config'
export { createJetStreamScanPublisher, type JetStreamPublisherOptions } from './scan-stream-publisher'
export { createJetStreamScanSource, type JetStreamSourceOptions } from './scan-stream-source'
export { createScanRelay, type ScanRelay, type ScanRelayOptions } from './scan-relay'
