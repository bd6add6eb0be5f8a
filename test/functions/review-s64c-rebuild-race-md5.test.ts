// Review s64c. Review s61g's race (a DELETE while another Workers isolate reads a slice of a sliced rebuild)
// on a bucket whose etag is the MD5 of the body, as on S3 and R2 (here the real radosgw). The s61g fix rests
// on the purge's rewrite of m/s/rebuild.json changing its etag, so that the slice reader's conditional save
// fails. When the deleted session was not among the progress's entries yet (it is in the slice being read),
// that rewrite wrote the same bytes, the etag stayed, and the reader saved the deleted session's task; the
// last slice then wrote it into a manifest page. Each write of the progress now holds a token of its own.
import { expect, it } from 'vitest';
import { keys } from '../../lib/model/keys.js';
import { copiedId, copiedIn, gatedPut, holdersOf } from '../support/copied-sessions.js';
import { openTestS3 } from '../support/s3.js';
import { limitedWorker } from '../support/worker-limit.js';

const N = 700;
const VICTIM = 350; // in the second slice (s0300..s0599)

it('radosgw (MD5 etags): a delete during another isolate slice read leaves no object holding its text', async () => {
  const store = openTestS3('s64c-md5');
  await copiedIn(store, N);
  const rebuildKey = keys.manifestRebuild('edge');
  // Isolate A's view of the bucket: its save of the progress is slow (it lands after B's delete).
  const gate = gatedPut(store, (key) => key === rebuildKey);
  gate.arm();
  const gated = gate.store;
  const a = limitedWorker(gated);
  const b = limitedWorker(store);
  expect((await b.call('GET', '/v1/sessions?limit=5')).status).toBe(503); // B reads slice 1
  const listing = a.call('GET', '/v1/sessions?limit=5'); // A reads the progress and slice 2
  await gate.reached;
  const before = (await store.get(rebuildKey))!;
  expect((await b.call('DELETE', `/v1/sessions/${copiedId(VICTIM)}`)).status).toBe(204);
  const after = (await store.get(rebuildKey))!;
  // The purge's rewrite changed the progress's etag (it held the same entries, so the same bytes before).
  expect(after.etag).not.toBe(before.etag);
  gate.release();
  expect((await listing).status).toBe(503);
  let ok = false;
  for (let k = 0; k < 10 && !ok; k++) {
    a.isolate();
    await new Promise((d) => setTimeout(d, 1100));
    ok = (await a.call('GET', '/v1/sessions?limit=100')).status === 200;
  }
  expect(ok).toBe(true);
  expect(await holdersOf(store, `copied task ${VICTIM}"`)).toEqual([]);
}, 180_000);
