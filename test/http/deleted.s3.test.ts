import { describe, it } from 'vitest';
import { deletedMeansGone } from '../sessions/deleted-scenario.js';
import { openTestS3 } from '../support/s3.js';
import { makeApp } from './helpers.js';

describe('deleted means gone (radosgw)', () => {
  it('after DELETE and cleanup, no object holds a deleted session’s task or text; the rest still list, read and search', async () => {
    await deletedMeansGone(await makeApp({ objects: openTestS3('deleted') }));
  });
});
