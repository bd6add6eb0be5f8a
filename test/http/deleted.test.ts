import { describe, it } from 'vitest';
import { deletedMeansGone } from '../sessions/deleted-scenario.js';
import { makeApp } from './helpers.js';

describe('deleted means gone (local folder)', () => {
  it('after DELETE and cleanup, no object holds a deleted session’s task or text; the rest still list, read and search', async () => {
    await deletedMeansGone(await makeApp());
  });
});
