export { createGateway, type GatewayDeps } from './app'
export { type Admission, createAdmission, policiesOf } from './admission'
export { corsOrigins } from './plugins/cors'
export type { ReadinessChecks } from './routes/health'
