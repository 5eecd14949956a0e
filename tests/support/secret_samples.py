"""Hand-written fake secrets of every family ``hermes_core.redaction`` covers (valid shapes, never
real keys), for the redaction tests and the sink tests (archive, spill, CLI output, logs).

Each sample is ``(family, text, secret)``: ``text`` is how the secret shows up in a session (an
``.env`` line, a JSON field, a header ...), ``secret`` the part that must never come out. The
values are assembled from pieces so that no file of the repository holds one whole (secret
scanners on a push would flag them).
"""

from __future__ import annotations

_B64 = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"  # AWS's documented example shape
_HEX32 = "0f1e2d3c4b5a6978" + "8796a5b4c3d2e1f0"
_ALNUM = "Ab3dEf6hIj9kLm2n" + "Op5qRs8tUv1wXy4z"

OPENAI = "sk-proj-" + _ALNUM + "T3Blbk"
ANTHROPIC = "sk-ant-api03-" + _ALNUM + "-" + _ALNUM[:12] + "AA"
AWS_ID = "AKIA" + "IOSFODNN7" + "EXAMPLE"
STS_ID = "ASIA" + "Y34FZKBOKM" + "UTVV7A"
STS_TOKEN = "FwoGZXIvYXdzEBYaD" + "HRlc3RzZXNzaW9udG9rZW4"
GITHUB = "ghp_" + _ALNUM + "abcd"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "_" + _ALNUM + _ALNUM[:8]
GITLAB = "glpat-" + "xY12-ab34_" + "cd56EF78gh"
SLACK = "xoxb-" + "1234567890-" + "0987654321-" + "abcdefABCDEF1234"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0001ABCD/B0002EFGH/" + "XXXXXXXXXXXXXXXXXXXXXXXX"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjt" + "T1zdp7dc"
STRIPE_WEBHOOK = "whsec_" + _ALNUM
SQUARE = "sq0csp-" + _ALNUM + "-" + _ALNUM[:10] + "ab"
GOOGLE = "AIza" + "SyD-1234567890" + "abcdefghijklmnopqrstu"
HF = "hf_" + "QwErTyUiOpAsDfGh" + "JkLzXcVbNm"
NPM = "npm_" + "a1B2" * 9
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + "CJDk3NzQ2ZmE5LTE" + "x" * 40
SENDGRID = "SG." + "abcdefghijklmnop12" + "34" + "." + "QRSTUVWXYZabcdef" + "5678ghijklmnopqrstuvwxyz0"
TWILIO = "SK" + _HEX32
MAILCHIMP = _HEX32 + "-us" + "12"
TELEGRAM = "123456789" + ":AA" + "HdqTcvCH1vGWJxfSe" + "ofSAs0K5PALDsaw1"
DISCORD = "MTE4NjU0MzIxMDk4" + "NzY1NDMy" + ".GaBcDe." + "x1y2z3" * 5
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
ARTIFACTORY = "AKC" + "p5bueTFpfypEqQbGJP" + "p7BHWbb5ovJtYjK1DkM2"
AZURE_STORAGE = "Zm9vYmFy" * 11
AZURE_AD = "abc" + "8Q~" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
SOFTLAYER = "a1b2c3d4" * 8
PEM_BODY = "MIIEvQIBADANBgkqhki" + "G9w0BAQEFAASC"
PEM = ("-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "\n" + PEM_BODY[::-1] + "\n"
       + "-----END RSA " + "PRIVATE KEY-----")
GCP_KEY_ID = "3f9a1c0d2e4b5a69" + "78c1d2e3f4a5b6c7d8e9f0a1"
PUTTY_BODY = "AAAAB3NzaC1yc2EAAAAB" + "JQAAAIEAhZ"
GOOGLE_OAUTH_SECRET = "GOCSPX-" + "AbCdEfGh1234" + "IjKlMnOp5678qrst"
GOOGLE_OAUTH_TOKEN = "ya29." + "a0AfH6SMB" + _ALNUM
VAULT = "hvs." + "CAESIJ" + _ALNUM
DIGITALOCEAN = "dop_v1_" + _HEX32 + _HEX32
SHOPIFY = "shpat_" + _HEX32
LINEAR = "lin_api_" + _ALNUM + "abcdefgh"
AGE = "AGE-SECRET-KEY-1" + "QQSPZQ9CHFU8S6KRWQ" + "7ZV6GJ6NNQLAQKXYR0TN3QWRLLJUJ3ZK5SQ0FHZ6"
PASSWORD = "hunter2" + "-Corr3ct"
BASIC_PW = "s3cr3t" + "Pa55"
ENV_SECRET = "dj4ng0" + "-s3cr3t-k3y"

SAMPLES: list[tuple[str, str, str]] = [
    ("openai", f"OPENAI_API_KEY={OPENAI}", OPENAI[8:]),
    ("openai", f"client = OpenAI(api_key=\"{OPENAI}\")", OPENAI[8:]),
    ("anthropic", f"using {ANTHROPIC} for claude", ANTHROPIC[13:]),
    ("aws_access_key_id", f"aws_access_key_id = {AWS_ID}", AWS_ID[4:]),
    ("aws_secret", f"aws_access_key_id = {AWS_ID}\naws_secret_access_key = {_B64}", _B64),
    ("aws_secret", f"export AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET={_B64}", _B64),
    ("aws_sts_json", '{"Credentials": {"AccessKeyId": "' + STS_ID + '", "SecretAccessKey": "' + _B64
     + '", "SessionToken": "' + STS_TOKEN + '", "Expiration": "2026-12-06T05:00:00Z"}}', _B64),
    ("aws_sts_json", '{"AccessKeyId": "' + STS_ID + '",\n  "SessionToken": "' + STS_TOKEN + '"}', STS_TOKEN),
    ("gcp_service_account", '{"type": "service_account", "private_key_id": "' + GCP_KEY_ID + '", "private_key": "'
     + PEM.replace("\n", "\\n") + '\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}', GCP_KEY_ID),
    ("gcp_service_account", '{"private_key": "' + PEM.replace("\n", "\\n") + '"}', PEM_BODY),
    ("github", f"git push with {GITHUB}", GITHUB[4:]),
    ("github", f"GH_TOKEN: {GITHUB_PAT}", GITHUB_PAT[11:]),
    ("gitlab", f"token {GITLAB} here", GITLAB[6:]),
    ("slack", f"SLACK_BOT={SLACK}", SLACK[5:]),
    ("slack_webhook", f"post to {SLACK_HOOK}", SLACK_HOOK[33:]),
    ("stripe", f"stripe.api_key = '{STRIPE}'", STRIPE[8:]),
    ("stripe", f"endpoint secret {STRIPE_WEBHOOK}", STRIPE_WEBHOOK[6:]),
    ("square", f"square {SQUARE}", SQUARE[7:]),
    ("google_api_key", f"maps key {GOOGLE}", GOOGLE[4:]),
    ("huggingface", f"HF {HF}", HF[3:]),
    ("npm", f"//registry.npmjs.org/:_authToken={NPM}", NPM[4:]),
    ("pypi", f"password = {PYPI}", PYPI[5:]),
    ("sendgrid", f"SENDGRID {SENDGRID}", SENDGRID[3:]),
    ("twilio", f"twilio api key {TWILIO}", TWILIO[2:]),
    ("mailchimp", f"mc key {MAILCHIMP}", MAILCHIMP),
    ("telegram", f"bot {TELEGRAM} started", TELEGRAM),
    ("discord", f"discord bot {DISCORD}", DISCORD),
    ("jwt", f"cookie {JWT}", JWT),
    ("artifactory", f"X-JFrog-Art-Api: {ARTIFACTORY}", ARTIFACTORY[3:]),
    ("azure_storage_key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + AZURE_STORAGE
     + "==;EndpointSuffix=core.windows.net", AZURE_STORAGE),
    ("azure_client_secret", f"AZURE_CLIENT_SECRET = {AZURE_AD}", AZURE_AD),
    ("azure_client_secret", f"the app secret is {AZURE_AD} (rotate)", AZURE_AD),
    ("softlayer", f"GET https://api.softlayer.com/soap/v3/{SOFTLAYER}", SOFTLAYER),
    ("private_key", f"key file:\n{PEM}\nend", PEM_BODY),
    ("private_key", f"PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\n{PUTTY_BODY}\nPrivate-MAC: 00", PUTTY_BODY),
    ("basic_auth", f"git clone https://bob:{BASIC_PW}@github.com/org/repo.git", BASIC_PW),
    ("url_token", f"GET /api?access_token={BASIC_PW}x&format=json", BASIC_PW),
    ("authorization", f"curl -H 'Authorization: Basic {BASIC_PW}Zm9v' https://api", BASIC_PW),
    ("bearer", f"Bearer {BASIC_PW}abcdefgh", BASIC_PW),
    ("password", f"DB_PASSWORD={PASSWORD}", PASSWORD),
    ("password", f"password: {PASSWORD}", PASSWORD),
    ("password", f"mysql --password={PASSWORD} -u root", PASSWORD),
    ("dotenv", f"# .env\nDEBUG=1\nSECRET_KEY='{ENV_SECRET}'\nDATABASE_URL=postgres://app:{BASIC_PW}@db/app\n", ENV_SECRET),
    ("dotenv", f"DATABASE_URL=postgres://app:{BASIC_PW}@db/app", BASIC_PW),
    ("cloudant", f"https://acct:{_HEX32 * 2}@acct.cloudant.com", _HEX32 * 2),
    ("google_oauth", f'"client_secret": "{GOOGLE_OAUTH_SECRET}"', GOOGLE_OAUTH_SECRET[7:]),
    ("google_oauth", f"got {GOOGLE_OAUTH_SECRET} and {GOOGLE_OAUTH_TOKEN}", GOOGLE_OAUTH_TOKEN[5:]),
    ("vault", f"vault token {VAULT}", VAULT[4:]),
    ("digitalocean", f"doctl auth init -t {DIGITALOCEAN}", DIGITALOCEAN[7:]),
    ("shopify", f"shop token {SHOPIFY}", SHOPIFY[6:]),
    ("linear", f"linear {LINEAR}", LINEAR[8:]),
    ("age", f"# created: 2026-12-06\n{AGE}", AGE[16:]),
    ("redis_url", f"REDIS_URL=redis://:{BASIC_PW}@cache:6379/0", BASIC_PW),
    ("redis_url", f"connect to redis://:{BASIC_PW}@cache:6379/0 now", BASIC_PW),
    ("ibm_cloud_iam", f"ibm_cloud_iam_api_key = {_ALNUM}{_ALNUM[:12]}", _ALNUM),
    ("ibm_cos_hmac", f"secret_access_key: {_HEX32}{_HEX32[:16]}", _HEX32),
]

#: The secrets alone (for "never appears" checks), longest first.
SECRETS = sorted({secret for _, _, secret in SAMPLES}, key=len, reverse=True)
