import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../lib/sessions/store.js';
import {
  StorageUnavailableError,
  type ObjectStore,
  type PutOptions,
} from '../../lib/storage/port.js';
import { tempLocalStore } from '../support/temp-store.js';
import { openTestS3 } from '../support/s3.js';

// docs/design.md, "How each crash point heals": a write whose log record's PUT failed is listed from its
// object, since its marker sends readers there. A standing marker (lib/sessions/markers.ts) is reused by
// its process while younger than 5 min by its own clock; another process's compactor deletes it as stale
// once older than 15 min by its clock. With the writer's clock 20 minutes behind, the compactor deleted the
// marker the writer still wrote under, and a write whose log record was then refused was never listed
// (review s54b, until 2026-12-06). Such a write now stores a marker of its own after it.

class RefusesLogs implements ObjectStore {
  refuse = false;
  readonly name: string;
  constructor(private readonly inner: ObjectStore) {
    this.name = inner.name;
  }
  get(key: string) {
    return this.inner.get(key);
  }
  put(key: string, body: Uint8Array, options?: PutOptions) {
    if (this.refuse && key.includes('/m/l/'))
      return Promise.reject(new StorageUnavailableError(`put ${key}: refused`));
    return this.inner.put(key, body, options);
  }
  delete(keys: string | string[]) {
    return this.inner.delete(keys as never);
  }
  list(prefix: string, options?: never) {
    return (this.inner as any).list(prefix, options);
  }
  head(key: string) {
    return (this.inner as any).head(key);
  }
}

async function scenario(writerSkewMs: number, s3 = false) {
  const objects: ObjectStore = s3 ? openTestS3('marker-skew') : tempLocalStore('marker-skew');
  const refusing = new RefusesLogs(objects);
  const onError = () => undefined;
  // The writer (a server whose clock is behind) and a reader on a machine with the right time.
  const writer = new SessionStore(refusing, { now: () => Date.now() + writerSkewMs, onError });
  const reader = new SessionStore(objects, { onError });
  const ns = 'alice';
  const made = await writer.create(ns, { task: 't', messages: [{ role: 'user', content: 'one' }] });
  const id = made.receipt.id;
  await writer.settled();
  // The reader lists (and compacts, as its list schedules when it sees a stale marker).
  await reader.list(ns, { limit: 20 });
  await reader.manifest.compact(ns);
  // The writer appends again, 1 s later by its clock (it reuses its standing marker); the log record is refused.
  refusing.refuse = true;
  const appended = await writer.append(
    ns,
    id,
    { messages: [{ role: 'user', content: 'two' }] },
    undefined,
  );
  expect(appended.receipt.revision).toBe(2);
  await writer.settled().catch(() => undefined);
  refusing.refuse = false;
  const listed = await reader.list(ns, { limit: 20 });
  const compacted = await reader.manifest.compact(ns).then(() => reader.list(ns, { limit: 20 }));
  const fresh = new SessionStore(objects, { onError });
  const third = await fresh.list(ns, { limit: 20 });
  return { id, listed, compacted, third };
}

describe('standing markers across clocks', () => {
  it('control: same clocks, a write whose log record is refused is listed from its object', async () => {
    const { listed, third } = await scenario(0);
    expect(listed.sessions[0]!.turns).toBe(2);
    expect(third.sessions[0]!.turns).toBe(2);
  });

  it("the writer's clock 20 minutes behind: the acknowledged append is still listed", async () => {
    const { listed, compacted, third } = await scenario(-20 * 60_000);
    expect(listed.sessions[0]!.turns).toBe(2);
    expect(compacted.sessions[0]!.turns).toBe(2);
    expect(third.sessions[0]!.turns).toBe(2);
  });
});

describe('standing markers across clocks, on radosgw', () => {
  it("the writer's clock 20 minutes behind: the acknowledged append is still listed (S3)", async () => {
    const { listed, third } = await scenario(-20 * 60_000, true);
    expect(listed.sessions[0]!.turns).toBe(2);
    expect(third.sessions[0]!.turns).toBe(2);
  });
});
