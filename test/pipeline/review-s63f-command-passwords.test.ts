// Review s63f, finding 3. Everyday command lines and build files kept their passwords: keytool's
// `-storepass`/`-keypass` (one dash), Gradle's `storePassword '…'` (Groovy's call syntax), `echo '…' |
// sudo -S`, and a short flag's value glued to it (`sqlcmd -PSecret`). (`mongo -p`, `ldapsearch -w`, `zip -P`,
// `7z -p`, `az login -p`, smbclient `-U user%pw`, sqlplus `user/pw@db`, htpasswd, `net user`, rabbitmqctl,
// `gh secret set --body` and redis `AUTH` are not covered: review s63i found the first five's words in other
// commands, `docker run --name mongo -p 27017:27017`, and the R2-only Worker bundle had no room left.)
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('command-line and build-file passwords', () => {
  it.each([
    `keytool -genkeypair -alias release -keystore release.jks -storepass ${PW} -keypass ${PW}`,
    `keytool -importkeystore -srcstorepass ${PW} -deststorepass ${PW} -destkeystore new.p12`,
    `sqlcmd -S db -U sa -P${PW} -Q "select 1"`,
    `echo '${PW}' | sudo -S systemctl restart nginx`,
    `cat app/build.gradle  # signingConfigs { release { storePassword '${PW}'\n keyPassword "${PW}" } }`,
  ])('is not stored: %s', async (command) => expect(await storedHolders(command)).toEqual([]));

  it('other flags of the same commands stay', () => {
    for (const text of [
      'redis-cli -h cache -p 6379',
      'mongo --port 27017 -u admin',
      'mongodump --db app -o /tmp/dump',
      'ldapsearch -W -b dc=example,dc=org',
      'unzip -o backup.zip -d /tmp/x',
      '7z x archive.7z -o/tmp/out',
      'keytool -list -storepass:env STOREPASS -keystore release.jks',
      'echo "$SUDO_PASSWORD" | sudo -S true',
      'storePassword System.getenv("STORE_PASSWORD")',
      // Review s63i: other programs' flags near these words, where no such command starts.
      'docker run --name mongo -p 27017:27017 mongo:7',
      'docker compose -f mongo.yml -p myproject up',
      'wget https://example.com/tool.zip -P /opt/tools',
      'scp backup.zip me@host:/tmp -P 2222',
      'docker exec -it ldap-server -w /tmp ls',
      'pip wheel python-ldap -w ./wheels',
    ])
      expect(redact(text)).toBe(text);
  });
});
