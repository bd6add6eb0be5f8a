// Preloaded into the soak's server (`node --require`): every 10 s, one stderr line with the process's
// memory by kind, so the soak can tell growth of the JS heap or of buffers from the allocator's own.
// Only on the main thread: tsx's module hooks run on a thread of their own, which loads this too.
if (require('node:worker_threads').isMainThread) {
  setInterval(() => {
    const m = process.memoryUsage();
    const memory = { heap: m.heapUsed, external: m.external, buffers: m.arrayBuffers };
    process.stderr.write(JSON.stringify({ level: 'debug', soak_memory: memory }) + '\n');
  }, 10_000).unref();
}
