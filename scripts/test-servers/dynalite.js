// Runs dynalite (the DynamoDB API, in memory) for the tests:
//   node dynalite.js PATH/TO/dynalite/cli.js --host 127.0.0.1 --port PORT
//
// dynalite 4.0.0 throws from its request's 'error' listener, so a client
// that resets a connection before its request body has arrived ("aborted",
// ECONNRESET) takes the whole server down, and every later test of the run
// fails with "connection refused" (github.com/architect/dynalite/issues/183).
// The tests cut connections on purpose (partitions, lost replies), and on a
// loaded machine a client's deadline can end a request mid-body. An aborted
// request is its client's affair: it is logged and the server goes on. Any
// other uncaught error still stops the server, with its stack.
'use strict'

const cli = process.argv.splice(2, 1)[0]
if (!cli) {
  console.error('usage: node dynalite.js PATH/TO/dynalite/cli.js [dynalite flags]')
  process.exit(2)
}

process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.error(`[dynalite] a client aborted its request before the body arrived (${err.code}); serving on`)
    return
  }
  console.error(err)
  process.exit(1)
})

require(cli)
