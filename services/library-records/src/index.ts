// The one library-record lifecycle the records and dynamic services are built from. The store
// cores are subpaths (`./sqlite`, `./mongo`), so importing this barrel never loads a driver.
export * from './fields'
export * from './field-rules'
export * from './body-check'
export * from './batch'
export * from './batch-envelope'
export * from './review'
export * from './list-query'
export * from './ports'
export * from './kind'
export { createLibraryService, EXPORT_PAGE_SIZE, notFoundIn, type LibraryDeps, type LibraryService } from './service'
export { INSERT_ATTEMPTS } from './insert'
export { serveLibrary, type LibraryOperations, type LibrarySubjects } from './handlers'
