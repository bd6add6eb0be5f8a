import { Miniflare } from 'miniflare';
import { afterAll } from 'vitest';
import { R2Store, type R2BucketLike } from '../../lib/storage/r2.js';
import { describeConformance } from './conformance.js';

// The R2 binding of miniflare's workerd, reached from Node through miniflare's binding proxy.
const mf = new Miniflare({
  modules: true,
  script: 'export default { fetch() { return new Response("") } }',
  r2Buckets: ['BUCKET'],
});
afterAll(() => mf.dispose());

describeConformance(
  'r2 (miniflare)',
  async () => new R2Store((await mf.getR2Bucket('BUCKET')) as unknown as R2BucketLike),
);
