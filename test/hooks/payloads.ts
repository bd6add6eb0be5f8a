/** Trimmed GitHub webhook payloads (the fields the summaries read, plus some they ignore). */
const repository = {
  id: 1,
  full_name: 'octo/satchel',
  html_url: 'https://github.com/octo/satchel',
};

export const githubPayloads = {
  workflowRunFailed: {
    action: 'completed',
    workflow_run: {
      id: 9001,
      name: 'CI',
      head_branch: 'main',
      head_sha: '7d1c2e9f00aa11bb22cc33dd44ee55ff66778899',
      display_title: 'Fix the flaky upload test',
      run_number: 42,
      run_attempt: 2,
      event: 'push',
      status: 'completed',
      conclusion: 'failure',
      html_url: 'https://github.com/octo/satchel/actions/runs/9001',
      actor: { login: 'alice' },
      triggering_actor: { login: 'alice' },
    },
    workflow: { id: 7, name: 'CI' },
    repository,
    sender: { login: 'alice' },
  },
  checkRun: {
    action: 'completed',
    check_run: {
      id: 77,
      name: 'lint',
      head_sha: 'abcdef1234567890',
      status: 'completed',
      conclusion: 'failure',
      html_url: 'https://github.com/octo/satchel/runs/77',
      output: { title: '3 problems', summary: 'lib/a.ts:1 unused import', text: null },
      check_suite: { head_branch: 'feature/x' },
      app: { name: 'Linter' },
    },
    repository,
    sender: { login: 'alice' },
  },
  issueComment: {
    action: 'created',
    issue: {
      number: 12,
      title: 'Add webhooks',
      html_url: 'https://github.com/octo/satchel/pull/12',
      pull_request: { url: 'x' },
    },
    comment: {
      body: 'Please rebase.\nThanks!',
      user: { login: 'bob' },
      html_url: 'https://github.com/octo/satchel/pull/12#issuecomment-1',
    },
    repository,
    sender: { login: 'bob' },
  },
  push: (n: number) => ({
    ref: 'refs/heads/main',
    before: '1111111aaaa',
    after: '2222222bbbb',
    created: false,
    deleted: false,
    forced: false,
    compare: 'https://github.com/octo/satchel/compare/1111111...2222222',
    commits: Array.from({ length: n }, (_, i) => ({
      id: `c${String(i).padStart(6, '0')}ffff`,
      message: `commit ${i}\n\nlonger body`,
      author: { name: 'Alice', username: 'alice' },
    })),
    pusher: { name: 'alice' },
    repository,
    sender: { login: 'alice' },
  }),
};
