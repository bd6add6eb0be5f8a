// Review s65f, F2. A password flag at the end of a quoted command string (a package.json script, `sh -c "…"`,
// `subprocess.run("…")`, `exec('…')`), a command line held as an argv array in text (`docker inspect`'s
// `"Cmd": [...]`) and `echo pw | docker login --password-stdin` unquoted were stored: the value had to end
// at a blank, `;`, `|`, `&` or `)`, and the argv forms have `", "` between a flag and its value.
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('password flags at the end of a quoted command string, and in argv arrays', () => {
  it.each([
    `{\n  "scripts": {\n    "db:reset": "mysql -uroot -p${PW}"\n  }\n}`,
    `{"scripts": {"flush": "redis-cli -a ${PW}"}}`,
    `{"scripts": {"db": "sqlcmd -S localhost -U sa -P ${PW}"}}`,
    `{"scripts": {"deploy": "sshpass -p ${PW}"}}`,
    `{"scripts": {"login": "docker login -u me -p ${PW}"}}`,
    `RUN sh -c "mysql -uroot -p${PW}"`,
    `subprocess.run("mysql -uroot -p${PW}", shell=True)`,
    `exec('sshpass -p ${PW}')`,
    `echo ${PW} | docker login --password-stdin -u me`,
    `"Cmd": ["redis-server", "--requirepass", "${PW}"],`,
    `"Args": ["psql", "--password", "${PW}"]`,
    `["mysql", "-uroot", "-p${PW}"]`,
    `['redis-cli', '-a', '${PW}', 'ping']`,
    `["sshpass","-p","${PW}","ssh","host"]`,
  ])('is not stored: %s', async (output) =>
    expect(await storedHolders('cat it', output)).toEqual([]),
  );

  it('other quoted commands and arrays stay', () => {
    for (const text of [
      `{"scripts": {"db": "mysql -uroot -p"}}`,
      `{"scripts": {"db": "mysql -uroot -p \${DB_PASSWORD}"}}`,
      `{"scripts": {"flush": "redis-cli -a $REDIS_PASSWORD"}}`,
      `echo "$SUDO_PASSWORD" | sudo -S true`,
      `echo $DOCKER_TOKEN | docker login --password-stdin`,
      `echo done | tee log.txt`,
      `["redis-cli", "-h", "cache", "-p", "6379"]`,
      `parser.add_argument("--password", "-p", help="the password")`,
      `["--password", "--user", "root"]`,
      `args = ["--token", token]`,
    ])
      expect(redact(text)).toBe(text);
  });
});
