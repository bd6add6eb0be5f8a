// Review s67e (2026-12-07), finding 3: a snippet picked the text holding the most of the query's typed words
// as substrings, stopwords included, so a question-shaped query (an agent's usual form) showed the message
// with the most `what`, `is`, `the` (and `is` inside `this`), not the one that matched: `what is the
// zqvcache` showed `what is this thing, and where is the other one?`. Only words that give a search token
// count now.
import { describe, expect, it } from 'vitest';
import { deepSearch } from '../../lib/search/engine.js';
import { makeApp, settleAll } from '../http/helpers.js';

describe('a snippet', () => {
  it('shows the text holding the search words, not the query stopwords (search and DeepSearch)', async () => {
    const app = await makeApp();
    const made = await app.call('POST', '/v1/sessions', {
      body: {
        task: 'ci',
        messages: [
          { role: 'user', content: 'what is this thing, and where is the other one?' },
          { role: 'assistant', content: 'The zqvcache broke on Monday.' },
        ],
      },
    });
    expect(made.status).toBe(201);
    await settleAll(app);
    for (const query of ['what is the zqvcache', 'Where is the zqvcache and what is it?']) {
      const res = await app.call('POST', '/v1/session_search', {
        body: { action: 'search', query },
      });
      expect(res.status).toBe(200);
      expect(res.json.results).toEqual([
        expect.objectContaining({ id: made.json.id, snippet: 'The zqvcache broke on Monday.' }),
      ]);
      const live = (await app.sessions.manifest.view('alice')).entries;
      const deep = await deepSearch(app.sessions, 'alice', live, query, 5);
      expect(deep.map((h) => h.snippet)).toEqual(['The zqvcache broke on Monday.']);
    }
  });
});
