export * from './fields'
export * from './batch'
export * from './review'
export * from './list-query'
