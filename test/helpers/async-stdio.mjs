/**
 * Preloaded into a child process (`NODE_OPTIONS=--import <this file>`): its stdout and stderr
 * write as pipes do on macOS, asynchronously (Node's process.stdout/stderr docs): a write returns
 * at once and its bytes, and then its callback, come later (here 100 ms later, in order, as a
 * pipe whose reader lags). On Linux, where these pipes are synchronous, a process.exit() right
 * after a write loses nothing; with this it loses what the write had not handed over yet, as on
 * macOS: a test of a process's last lines fails here as it would there.
 */
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream)
  stream.write = (chunk, encoding, callback) => {
    if (typeof encoding === 'function') [encoding, callback] = [undefined, encoding]
    setTimeout(() => write(chunk, encoding, callback), 100)
    return true
  }
}
