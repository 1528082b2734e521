// PGlite (PostgreSQL 18 compiled to Wasm) with pgvector and pg_trgm, served
// over PostgreSQL's wire protocol by pglite-socket on 127.0.0.1:$PORT, for
// imprint's conformance tests (scripts/pglite.sh copies this file next to
// the packages it installs and runs it there). One backend: queries are
// serialized; pglite-socket's multiplexer keeps a transaction's queries
// together, so several connections may be open. In memory: nothing is kept.
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

const port = Number(process.env.PORT)
if (!port) {
  console.error('pglite-server: PORT is required')
  process.exit(2)
}
const db = await PGlite.create({ extensions: { vector, pg_trgm } })
await db.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;')
const server = new PGLiteSocketServer({
  db,
  host: '127.0.0.1',
  port,
  maxConnections: Number(process.env.MAX_CONNECTIONS || 16),
})
await server.start()
const v = await db.query("SELECT version() AS v, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vec")
console.log(`pglite listening on 127.0.0.1:${port}: ${v.rows[0].v}; pgvector ${v.rows[0].vec}`)
const stop = async () => {
  await server.stop()
  await db.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
