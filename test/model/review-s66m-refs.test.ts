import { describe, expect, it } from 'vitest';
import { mergeExternalRefs } from '../../lib/model/refs.js';
import { makeApp } from '../http/helpers.js';

// Review s66m: external refs were deduplicated by a scan of the list per ref, in mergeExternalRefs and again in
// the save pipeline's redactRefs (over every stored ref, on every write): a create of 40,000 refs took 15-51 s
// with the event loop held (22 s for a create of 40,000 and 11 s for each append after it, against 1.7 s and 0.9 s
// now, on a loaded 2-core machine). The work is counted below, not timed; the rest checks the deduplication.
const refs = (n: number, by = 'me') =>
  Array.from({ length: n }, (_, i) => ({
    kind: 'issue',
    uri: `https://tracker.example/i/${i}`,
    created_by: by,
  }));

describe('external refs deduplicated on (kind, uri, created_by) (review s66m)', () => {
  it('merges 40,000 refs with repeats: each once, in first-seen order, stored ones first', () => {
    const now = '2026-12-07T00:00:00.000Z';
    const stored = mergeExternalRefs([], refs(20_000), now);
    const incoming = [...refs(40_000), ...refs(40_000).reverse(), ...refs(5, 'other')];
    const out = mergeExternalRefs(stored, incoming, now);
    expect(out).toHaveLength(40_005);
    expect(out.slice(0, 20_000)).toEqual(stored);
    expect(out[20_000]!.uri).toBe('https://tracker.example/i/20000');
    expect(out.at(-1)).toMatchObject({ created_by: 'other', uri: 'https://tracker.example/i/4' });
    // A kind or a uri alone is not the same ref; JSON keys make no false match across fields.
    const odd = mergeExternalRefs(
      [],
      [
        { kind: 'a,b', uri: 'c', created_by: 'x' },
        { kind: 'a', uri: 'b,c', created_by: 'x' },
      ],
      now,
    );
    expect(odd).toHaveLength(2);
  });

  it('reads each ref a bounded number of times, not once per other ref', () => {
    // Counted, not timed: each stored ref's `kind` read once per incoming ref was the quadratic scan.
    let reads = 0;
    const counted = (n: number) =>
      refs(n).map((r) => ({
        ...r,
        read_only: false,
        created_at: 'x',
        get kind() {
          reads++;
          return 'issue';
        },
      }));
    mergeExternalRefs(counted(2_000), refs(4_000), 'now');
    expect(reads).toBeLessThanOrEqual(2 * 2_000);
  });

  it('a create of 30,000 refs (half repeated) and an append beside them store each ref once', async () => {
    const app = await makeApp();
    const body = { task: 't', external_refs: [...refs(15_000), ...refs(15_000)] };
    const created = await app.call('POST', '/v1/sessions', { body });
    expect(created.status, created.text).toBe(201);
    const id = created.json.id as string;
    const appended = await app.call('POST', `/v1/sessions/${id}/messages`, {
      body: {
        messages: [{ role: 'user', content: 'one more' }],
        external_refs: refs(15_001).slice(14_999),
      },
    });
    expect(appended.status, appended.text).toBe(200);
    const got = await app.call('GET', `/v1/sessions/${id}`);
    expect(got.json.external_refs).toHaveLength(15_001);
    expect(got.json.external_refs.at(-1).uri).toBe('https://tracker.example/i/15000');
  }, 30_000);
});
