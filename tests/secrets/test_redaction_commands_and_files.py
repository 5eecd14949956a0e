"""The forms whose secret is told by its place, not its shape: a command's password flag, a
``.pgpass`` line, ``az storage account keys list`` output, a keyword whose value stands on the
next line. Each is masked where its context says so and left alone where the same shape is
something else (a port, a prompt, a time, a nested mapping), and what a rejected match spans
is still scanned for every other family."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import MASK, Redactor, redact

from hypothesis_budget import examples

PW = "Qx7" + "vLm2" + "pR9s"  # assembled: no whole fake secret in the file
AZ_KEY = "Zk3" * 28 + "ab=="  # 88 base64 characters, as a storage account key is


@pytest.mark.parametrize("text", [
    f"mysql -h db -u root -p{PW} app",
    f"mariadb-dump -uroot -p'{PW}' --all-databases",
    f"docker login -u bot -p {PW} registry.acme.io",
    f"podman login --username bot -p={PW} quay.io",
    f"helm registry login -u bot -p {PW} oci.acme.io",
    f"sshpass -p {PW} ssh deploy@10.0.0.5",
    f"sshpass -f /dev/null -p\"{PW}\" rsync -e ssh a b",
    f"redis-cli -h cache -a {PW} PING",
    f"keytool -list -keystore a.jks -storepass {PW}",
    f"jarsigner -keystore a.jks -keypass {PW} app.jar alias",
    f"htpasswd -b .htpasswd admin {PW}",
    f"htpasswd -nbB admin {PW}",
    f"openssl rsa -in k.pem -passin pass:{PW}",
    f"gpg --batch --passphrase {PW} -d f.gpg",
    f"sqlcmd -S db -U sa -P {PW} -Q 'select 1'",
    f"bcp dbo.t out t.dat -S db -U sa -P{PW} -c",
    f"zip -r -P {PW} backup.zip data/",
    f"smbclient //fs/share -U admin%{PW} -c ls",
    f"osql -S db -U sa -P {PW} -Q 'select 1'",
    f'mongosh "mongodb://db:27017/app" -u admin -p {PW}',
    f"mongodump --host db -u backup -p='{PW}' --out /tmp/dump",
    f"mongo admin -u root -p {PW} --eval 'db.stats()'",
    f"7z a -p{PW} -mhe=on backup.7z data/",
    f'7za x -p"{PW}" backup.7z',
])
def test_a_known_commands_password_flag_is_masked(text: str) -> None:
    out = Redactor(b"k" * 32).redact(text)
    assert PW not in out and "[REDACTED:password#" in out, out


@pytest.mark.parametrize("text", [
    "mysql -u root -p app",                       # -p then a space: prompts; 'app' is the database
    "mysql -h 127.0.0.1 -P 3306 -p",
    "mysqldump -uroot -p$MYSQL_ROOT_PASSWORD app",
    "docker run -p 8080:80 nginx",                # -p of run is a port
    "docker login -u bot --password-stdin ghcr.io",
    "sshpass -f pw.txt ssh -p 2222 deploy@host",  # ssh's -p after sshpass' command is a port
    "redis-cli -p 6379 ping",
    "keytool -list -storepass:env STOREPASS",
    "htpasswd -c .htpasswd admin",                # no -b: htpasswd prompts
    "htpasswd -b .htpasswd admin",                # no password given
    "openssl rsa -passin env:KEY_PASS -passout file:out.txt",
    "mysql -pPASSWORD   # replace PASSWORD",
    "unzip -p archive.zip file.txt",              # unzip's lower-case -p pipes to stdout
    "smbclient //fs/share -U admin",               # no %: smbclient prompts
    "mongosh -u admin -p --authenticationDatabase admin",  # -p alone: mongosh prompts
    "mongod --dbpath /data -p 27017",             # not a client: mongod is not listed
    "7z a -p backup.7z data/",                    # -p alone: 7z asks
    "7z x backup.7z -o/tmp/out",
    "osql -E -S db -Q 'select 1'",                # -E: a trusted connection, no password
    "python manage.py runserver  # django -p 8000",
])
def test_the_same_flags_without_a_password_stay(text: str) -> None:
    assert redact(text) == text


def test_the_arguments_before_the_flag_are_scanned_for_the_other_families() -> None:
    token = "ghp_" + "Ab3dEf6h" * 4 + "Ij9k"
    out = redact(f"mysql --password=one{PW} --ssl-key={token} -p{PW} app")
    assert PW not in out and token[4:] not in out and out.count(MASK) == 3


@pytest.mark.parametrize("text", [
    f"$ cat ~/.pgpass\nlocalhost:5432:app:app_user:{PW}\n",
    f"cat > ~/.pgpass <<'EOF'\n# prod\ndb.internal:6432:*:reporter:{PW}\nEOF",
    f"echo 'db:5432:app:u:{PW}' >> ~/.pgpass",
    f"PGPASSFILE=/etc/app/pgpass.conf\n*:*:*:replicator:{PW}",
    json.dumps({"command": f"cat ~/.pgpass\n10.0.0.7:5432:billing:rw:{PW}\n"}),
])
def test_a_pgpass_line_is_masked_where_the_context_names_the_file(text: str) -> None:
    out = redact(text)
    assert PW not in out and MASK in out, out


@pytest.mark.parametrize("text", [
    f"localhost:5432:app:app_user:{PW}",          # the same line with no .pgpass near
    "12:30:45:00:11 build started",               # a time, not a port in second place
    "fe80::1:2:3:4 on eth0\n$ cat ~/.pgpass",     # an IPv6 address (before the mention)
    f"$ cat ~/.pgpass\nerror: no such file\nlocalhost:5432:app:u:{PW}",  # another output in between
])
def test_a_pgpass_shaped_line_elsewhere_stays(text: str) -> None:
    assert redact(text) == text


def test_a_rejected_pgpass_shaped_span_is_still_scanned_for_the_other_families() -> None:
    # The .pgpass alternative spans the whole line: rejected (no .pgpass near), what it
    # covered must still meet the vendor prefixes.
    token = "ghp_" + "Ab3dEf6h" * 4 + "Ij9k"
    out = redact(f"see ~/.pgpass later\n\nnotes:\nx:5432:a:b:{token}")
    assert token[4:] not in out and out.endswith("ghp_" + MASK)


_FIELD = st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12)


@settings(max_examples=examples(40), deadline=None)
@given(host=_FIELD, port=st.integers(1, 65535), db=_FIELD, user=_FIELD,
       password=st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#%+", min_size=8, max_size=24))
def test_every_pgpass_entry_is_masked_under_cat_and_none_without(host, port, db, user, password) -> None:
    line = f"{host}:{port}:{db}:{user}:{password}"
    keyed = Redactor(b"k" * 32)
    out = keyed.redact(f"$ cat ~/.pgpass\n{line}\n")
    masked = re.escape(f"$ cat ~/.pgpass\n{host}:{port}:{db}:{user}:") + r"\[REDACTED:password#[0-9a-f]{6}\]\n"
    assert re.fullmatch(masked, out), out
    assert keyed.redact(f"$ cat notes.txt\n{line}\n") == f"$ cat notes.txt\n{line}\n"


def test_az_storage_account_keys_are_masked_in_json_table_and_tsv() -> None:
    keys = [{"creationTime": "2026-11-02T09:14:51+00:00", "keyName": n, "permissions": "FULL", "value": AZ_KEY}
            for n in ("key1", "key2")]
    table = (f"CreationTime               KeyName    Permissions    Value\n"
             f"2026-11-02T09:14:51+00:00  key1       FULL           {AZ_KEY}")
    tsv = f"2026-11-02T09:14:51+00:00\tkerb1\tFULL\t{AZ_KEY}"
    for text in (json.dumps(keys, indent=2), json.dumps(keys), table, tsv, json.dumps({"out": tsv})):
        out = Redactor(b"k" * 32).redact(text)
        assert AZ_KEY[:-2] not in out and "[REDACTED:azure_storage_key#" in out, out


def test_an_88_character_json_value_with_no_key_listing_near_stays() -> None:
    text = json.dumps({"digest": "sha512", "value": AZ_KEY})
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    f"database:\n  password:\n    {PW}\n  pool: 5",
    f"[smtp]\npassword =\n    {PW}\nport = 587",
    f"auth_token: >-\n  {PW}\n",
    f"secret: |\n  {PW}\n",
    f"api_key:\n  \"{PW}\"",
    json.dumps(f"db:\n  password:\n    {PW}\n"),  # the file inside a JSON string
])
def test_a_keyword_value_on_the_next_line_is_masked(text: str) -> None:
    out = redact(text)
    assert PW not in out and MASK in out, out


@pytest.mark.parametrize("text", [
    "password:\n  secretKeyRef:\n    name: db",     # a nested mapping
    "password:\n  - one\n  - two",                  # a list
    "token:\nretries: 3",                           # the next key, not indented
    "const password =\n  process.env.DB_PASSWORD;",  # code, and the name does not open the line
    "api_key:\n  settings.api_key",                  # a dotted name is code
    "Enter the new password:\n    (twice)",         # prose
    "  token:\n    ${{ secrets.TOKEN }}",           # a template
    "token:\n\t./scripts/fetch-token.sh",          # a Makefile target and its recipe
])
def test_what_follows_a_keyword_on_the_next_line_and_is_no_value_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("command", [
    f'mongosh "mongodb://db:27017/app" -u admin -p {PW}',
    f'mysql -h "db.internal" -u root -p{PW} app',
    f'7z a -t7z -p{PW} "backup 2026.7z" data/',
])
def test_a_quoted_argument_before_the_flag_inside_a_json_string(command: str) -> None:
    # a tool call's arguments escape the quotes (``\"``): an argument before the flag is still one
    out = redact(json.dumps({"command": command}))
    assert PW not in out and MASK in out, out
