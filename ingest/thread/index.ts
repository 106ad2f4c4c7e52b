// Ingest on its own thread (INGEST_THREAD=worker): the main thread authenticates and forwards
// the raw request; parsing, validation, encoding, the spool and the Kafka producer run on the
// worker's event loop.
export { startIngestThread, type IngestThread } from './ingest-thread.js'
export { registerIngestForwarding } from './forwarding-routes.js'
