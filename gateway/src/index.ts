export { createGateway, type GatewayDeps } from './app'
export { type Admission, createAdmission, policiesOf } from './admission'
export type { ReadinessChecks } from './routes/health'
