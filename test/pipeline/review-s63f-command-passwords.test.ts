// Review s63f, finding 3. Everyday command lines and build files kept their passwords: keytool's
// `-storepass`/`-keypass` (one dash), Gradle's `storePassword '…'` (Groovy's call syntax), `mongo`/`mongosh
// -p`, `ldapsearch -w`, `zip`/`unzip -P`, `7z a -p…` (glued), `az login … -p`, and `echo '…' | sudo -S`.
// The rules' keyword and command lists now hold them. (smbclient `-U user%pw`, sqlplus `user/pw@db`,
// htpasswd, `net user`, rabbitmqctl, `gh secret set --body` and redis `AUTH` are not covered: the R2-only
// Worker bundle had no room left for them.)
import { describe, expect, it } from 'vitest';
import { PW, redact, storedHolders } from './review-s63f-stored.js';

describe('command-line and build-file passwords', () => {
  it.each([
    `keytool -genkeypair -alias release -keystore release.jks -storepass ${PW} -keypass ${PW}`,
    `keytool -importkeystore -srcstorepass ${PW} -deststorepass ${PW} -destkeystore new.p12`,
    `mongo admin -u root -p ${PW}`,
    `mongosh "mongodb://db:27017" -u admin -p '${PW}'`,
    `ldapsearch -x -D "cn=admin,dc=example,dc=org" -w ${PW} -b dc=example,dc=org`,
    `zip -P ${PW} backup.zip db.sql`,
    `unzip -P ${PW} backup.zip`,
    `7z a -p${PW} archive.7z files/`,
    `echo '${PW}' | sudo -S systemctl restart nginx`,
    `az login --service-principal -u 0f6c9a52-1a43-4d5e-9f4e-1c2b3a4d5e6f -p ${PW} --tenant contoso`,
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
    ])
      expect(redact(text)).toBe(text);
  });
});
