// Workers entry with both stores (dist/worker/worker.js): R2 binding BUCKET by default, S3 when SATCHEL_STORAGE=s3.
import { s3Config } from '../lib/server/config.js';
import { S3Store } from '../lib/storage/s3.js';
import { workerHandler } from './worker-handler.js';

export default workerHandler({ config: s3Config, open: (s3) => new S3Store(s3) });
