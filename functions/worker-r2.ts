// Workers entry with the R2 binding only (dist/worker/worker-r2.js): the small bundle, no S3 SDK inside.
import { workerHandler } from './worker-handler.js';

export default workerHandler();
