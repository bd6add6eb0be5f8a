/**
 * `tsx test/support/radosgw-cli.ts` (or `npm run radosgw`): starts a private radosgw, prints the env lines
 * to reach it on stdout (progress goes to stderr), and keeps it running until SIGINT/SIGTERM.
 *   npx tsx test/support/radosgw-cli.ts > rgw.env &     # then, once rgw.env holds its lines:
 *   set -a; . ./rgw.env; set +a                        # (`eval "$(… | head -6)"` never returns: it runs on)
 */
import { startRadosgw } from './radosgw.js';

const started = Date.now();
const target = await startRadosgw({ log: (line) => process.stderr.write(`${line}\n`) }).catch(
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);

process.stdout.write(
  [
    `S3_ENDPOINT=${target.endpoint}`,
    `S3_BUCKET=${target.bucket}`,
    `AWS_ACCESS_KEY_ID=${target.accessKeyId}`,
    `AWS_SECRET_ACCESS_KEY=${target.secretAccessKey}`,
    `S3_REGION=${target.region}`,
    `S3_FORCE_PATH_STYLE=${target.forcePathStyle}`,
  ].join('\n') + '\n',
);
process.stderr.write(
  `radosgw ready in ${Date.now() - started} ms; Ctrl-C (SIGINT) or SIGTERM stops it.\n`,
);

// The daemons do not keep the event loop alive, so hold it open until a signal arrives.
const keepAlive = setInterval(() => {}, 1 << 30);
let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`${signal}: stopping radosgw\n`);
  target
    .stop()
    .then(() => {
      clearInterval(keepAlive);
      process.exit(0);
    })
    .catch((err: unknown) => {
      process.stderr.write(`stop failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, shutdown);
