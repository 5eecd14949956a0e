"""An independent, larger sample of fake secrets, written from the published formats (vendor docs,
GitHub's secret-scanning partner list, detect-secrets' plugin list, gitleaks' rule list - facts,
not code), in the layouts and contexts an agent's transcript holds them.

``CORPUS`` is a list of ``Sample(family, layout, text, secrets)``: ``text`` is the file, command
or output as it would be shown (a ``~/.aws/credentials`` file, ``aws sts`` JSON, a kubeconfig, a
``curl -u`` line ...), ``secrets`` the parts that must never come out (a vendor prefix such as
``ghp_`` may stay). Every value is generated from a seeded ``random.Random`` in the vendor's
alphabet and length, so no file holds a whole key (push-time scanners) and none is real.

``CONTEXTS`` puts a text where a transcript holds it: a tool result (``cat`` of the file), a
tool call's JSON arguments, an API response that carries the text as an escaped JSON string,
assistant text and user text. ``in_context`` builds the message.

``NOT_SECRETS`` are texts that look close and must stay as they are (code reading a secret,
hashes, UUIDs, git SHAs, prose).
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any, NamedTuple

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def _fake(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters of ``alphabet``, the same for the same ``seed`` (mixed, like a key)."""
    rng = random.Random(seed)
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        # a key drawn from a mixed alphabet holds every kind it can (as real ones of this length do)
        kinds = [k for k in (_LOWER, _UPPER, _DIGITS) if set(k) & set(alphabet)]
        if n < 12 or all(set(out) & set(k) for k in kinds):
            return out


class Sample(NamedTuple):
    family: str
    layout: str
    text: str
    secrets: tuple[str, ...]


def _pem(kind: str, lines: list[str]) -> str:
    return f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines) + f"\n-----END {kind}PRIVATE KEY-----"


def corpus(salt: str = "") -> list[Sample]:
    """Every sample, its values drawn afresh for ``salt`` (``""``: ``CORPUS``)."""

    def fake(alphabet: str, n: int, seed: str) -> str:
        return _fake(alphabet, n, seed + salt)

    # --- values -------------------------------------------------------------------------------------

    AWS_ID = "AKIA" + fake(_UPPER + "234567", 16, "aws-id")
    AWS_SECRET = fake(_B64, 40, "aws-secret")
    STS_ID = "ASIA" + fake(_UPPER + "234567", 16, "sts-id")
    STS_SECRET = fake(_B64, 40, "sts-secret")
    # A session token: base64 of a protobuf that opens with the same bytes every time.
    STS_TOKEN = "IQoJb3JpZ2luX2Vj" + fake(_B64, 380, "sts-token") + "="
    STS_TOKEN_OLD = "FwoGZXIvYXdz" + fake(_B64, 300, "sts-token-old")
    GCP_KEY_ID = fake(_HEX, 40, "gcp-kid")
    RSA_BODY = ["MIIEvgIBADANBgkqhkiG9w0BAQEFAASC" + fake(_B64, 32, "rsa0")] + [fake(_B64, 64, f"rsa{i}") for i in range(1, 6)]
    EC_BODY = ["MHcCAQEEI" + fake(_B64, 55, "ec0"), fake(_B64, 64, "ec1")]
    SSH_BODY = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
                + fake(_B64, 6, "ssh0")] + [fake(_B64, 70, f"ssh{i}") for i in range(1, 5)]
    PGP_BODY = ["lQOYBGV" + fake(_B64, 57, "pgp0")] + [fake(_B64, 64, f"pgp{i}") for i in range(1, 4)]
    PUTTY_PRIV = [fake(_B64, 64, f"ppk{i}") for i in range(4)]


    RSA_PEM = _pem("", RSA_BODY)
    GCP_SA = {
        "type": "service_account",
        "project_id": "acme-prod-42",
        "private_key_id": GCP_KEY_ID,
        "private_key": RSA_PEM + "\n",
        "client_email": "deployer@acme-prod-42.iam.gserviceaccount.com",
        "client_id": "1" + fake(_DIGITS, 20, "gcp-client"),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/deployer%40acme-prod-42.iam.gserviceaccount.com",
        "universe_domain": "googleapis.com",
    }
    GOOGLE_REFRESH = "1//0g" + fake(_URLSAFE, 98, "g-refresh")
    GOOGLE_CLIENT_SECRET = "GOCSPX-" + fake(_URLSAFE, 28, "g-secret")
    GEMINI = "AIza" + fake(_URLSAFE, 35, "gemini")
    AZ_STORAGE = fake(_B64, 86, "az-storage") + "=="
    AZ_SAS_SIG = fake(_B64, 43, "az-sig") + "="
    AZ_SAS_SIG_URL = AZ_SAS_SIG.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    AZ_SB_KEY = fake(_B64, 43, "az-sb") + "="
    AZ_AD = fake(_URLSAFE + "~.", 3, "az-ad-a") + "8Q~" + fake(_URLSAFE + "~.", 34, "az-ad-b")
    AZ_COSMOS = fake(_B64, 86, "az-cosmos") + "=="
    AZ_DEVOPS_PAT = fake(_LOWER + "234567", 52, "az-devops")
    GITHUB_PAT = "ghp_" + fake(_ALNUM, 36, "ghp")
    GITHUB_FINE = "github_pat_11" + fake(_UPPER + _DIGITS, 20, "ghf1") + "_" + fake(_ALNUM, 59, "ghf2")
    GITHUB_APP = "ghs_" + fake(_ALNUM, 36, "ghs")
    GITHUB_OAUTH = "gho_" + fake(_ALNUM, 36, "gho")
    GITLAB_PAT = "glpat-" + fake(_URLSAFE, 20, "glpat")
    GITLAB_RUNNER = "glrt-" + fake(_URLSAFE, 20, "glrt")
    GITLAB_DEPLOY = "gldt-" + fake(_URLSAFE, 20, "gldt")
    NPM = "npm_" + fake(_ALNUM, 36, "npm")
    PYPI = "pypi-AgEIcHlwaS5vcmc" + fake(_URLSAFE, 140, "pypi")
    HF = "hf_" + fake(_LOWER + _UPPER, 34, "hf")
    HF_ORG = "api_org_" + fake(_LOWER + _UPPER, 34, "hf-org")
    STRIPE_LIVE = "sk_live_51" + fake(_ALNUM, 97, "stripe")
    STRIPE_RESTRICTED = "rk_live_51" + fake(_ALNUM, 97, "stripe-rk")
    STRIPE_WEBHOOK = "whsec_" + fake(_ALNUM, 32, "whsec")
    SLACK_BOT = "xoxb-" + fake(_DIGITS, 13, "sl1") + "-" + fake(_DIGITS, 13, "sl2") + "-" + fake(_ALNUM, 24, "sl3")
    SLACK_USER = "xoxp-" + fake(_DIGITS, 13, "su1") + "-" + fake(_DIGITS, 13, "su2") + "-" + fake(_DIGITS, 13, "su3") + "-" + fake(_HEX, 32, "su4")
    SLACK_APP = "xapp-1-A" + fake(_UPPER + _DIGITS, 10, "sa1") + "-" + fake(_DIGITS, 13, "sa2") + "-" + fake(_HEX, 64, "sa3")
    SLACK_ROTATING = "xoxe.xoxp-1-" + fake(_ALNUM, 140, "sr")
    SLACK_HOOK_PATH = "T" + fake(_UPPER + _DIGITS, 10, "sh1") + "/B" + fake(_UPPER + _DIGITS, 10, "sh2") + "/" + fake(_ALNUM, 24, "sh3")
    TWILIO_SID = "AC" + fake(_HEX, 32, "tw-sid")
    TWILIO_KEY = "SK" + fake(_HEX, 32, "tw-key")
    TWILIO_AUTH = fake(_HEX, 32, "tw-auth")
    SENDGRID = "SG." + fake(_URLSAFE, 22, "sg1") + "." + fake(_URLSAFE, 43, "sg2")
    MAILCHIMP = fake(_HEX, 32, "mc") + "-us21"
    DISCORD_BOT = "MT" + fake(_ALNUM, 24, "dc1") + "." + fake(_URLSAFE, 6, "dc2") + "." + fake(_URLSAFE, 38, "dc3")
    DISCORD_HOOK_TOKEN = fake(_URLSAFE, 68, "dch")
    TELEGRAM = fake(_DIGITS, 10, "tg1") + ":AA" + fake(_URLSAFE, 33, "tg2")
    SHOPIFY = "shpat_" + fake(_HEX, 32, "shop")
    SHOPIFY_SECRET = "shpss_" + fake(_HEX, 32, "shopss")
    DO_PAT = "dop_v1_" + fake(_HEX, 64, "do")
    DO_OAUTH = "doo_v1_" + fake(_HEX, 64, "doo")
    DATABRICKS = "dapi" + fake(_HEX, 32, "dbx")
    DOPPLER = "dp.pt." + fake(_ALNUM, 43, "doppler")
    DOPPLER_SA = "dp.sa." + fake(_ALNUM, 43, "doppler-sa")
    LINEAR = "lin_api_" + fake(_ALNUM, 40, "linear")
    NOTION_OLD = "secret_" + fake(_ALNUM, 43, "notion")
    NOTION = "ntn_" + fake(_DIGITS, 11, "ntn1") + fake(_ALNUM, 35, "ntn2")
    ATLASSIAN = "ATATT3xFfGF0" + fake(_URLSAFE + "=", 170, "atl") + "=" + fake(_HEX, 8, "atl2").upper()
    POSTMAN = "PMAK-" + fake(_HEX, 24, "pm1") + "-" + fake(_HEX, 34, "pm2")
    GRAFANA_CLOUD = "glc_" + fake(_B64, 60, "glc") + "=="
    GRAFANA_API = "eyJrIjoi" + fake(_B64, 60, "gfk") + "=="
    GRAFANA_SA = "glsa_" + fake(_ALNUM, 32, "glsa") + "_" + fake(_HEX, 8, "glsa2")
    SENTRY_ORG = "sntrys_eyJpYXQiOjE3MD" + fake(_B64, 120, "sntrys")
    SENTRY_USER = "sntryu_" + fake(_HEX, 64, "sntryu")
    SENTRY_DSN_KEY = fake(_HEX, 32, "sentry-dsn")
    VAULT = "hvs." + fake(_URLSAFE, 92, "vault")
    VAULT_BATCH = "hvb." + fake(_URLSAFE, 130, "vault-b")
    OPENAI_PROJ = "sk-proj-" + fake(_URLSAFE, 74, "oa1") + "T3BlbkFJ" + fake(_URLSAFE, 74, "oa2")
    OPENAI_LEGACY = "sk-" + fake(_ALNUM, 20, "oal1") + "T3BlbkFJ" + fake(_ALNUM, 20, "oal2")
    OPENAI_SVC = "sk-svcacct-" + fake(_URLSAFE, 74, "oas") + "T3BlbkFJ" + fake(_URLSAFE, 20, "oas2")
    ANTHROPIC = "sk-ant-api03-" + fake(_URLSAFE, 93, "ant") + "AA"
    ANTHROPIC_ADMIN = "sk-ant-admin01-" + fake(_URLSAFE, 93, "anta") + "AA"
    GROQ = "gsk_" + fake(_ALNUM, 52, "groq")
    XAI = "xai-" + fake(_ALNUM, 80, "xai")
    JWT = ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiJ" + fake(_URLSAFE, 60, "jwt1") + "."
           + fake(_URLSAFE, 86, "jwt2"))
    MORE_VENDORS = [
        "key-" + fake(_HEX, 32, "mailgun"), "pul-" + fake(_HEX, 40, "pulumi"), "sbp_" + fake(_HEX, 40, "supabase"),
        "sl." + fake(_URLSAFE, 136, "dropbox"), "NRAK-" + fake(_UPPER + _DIGITS, 27, "newrelic"),
        "HRKU-" + fake(_URLSAFE, 60, "heroku"), "CFPAT-" + fake(_URLSAFE, 43, "contentful"),
        "EZAK" + fake(_ALNUM, 54, "easypost"), "FLWSECK_TEST-" + fake(_HEX, 32, "flw") + "-X",
        "ATBB" + fake(_ALNUM, 32, "bitbucket"), "CCIPAT_" + fake(_ALNUM, 22, "circle") + "_" + fake(_HEX, 40, "circle2"),
        "pscale_tkn_" + fake(_URLSAFE, 43, "pscale"), "rnd_" + fake(_ALNUM, 32, "render"),
        "figd_" + fake(_URLSAFE, 40, "figma"), "lsv2_pt_" + fake(_HEX, 32, "lsv2") + "_" + fake(_HEX, 10, "lsv2b"),
        "pcsk_" + fake(_ALNUM, 6, "pc1") + "_" + fake(_ALNUM, 64, "pc2"), "tfp_" + fake(_ALNUM, 44, "typeform"),
        "aio_" + fake(_ALNUM, 28, "adafruit"), "pnu_" + fake(_ALNUM, 36, "prefect"), "rdme_" + fake(_ALNUM, 70, "readme"),
        "rubygems_" + fake(_HEX, 48, "rubygems"), "xkeysib-" + fake(_HEX, 64, "brevo") + "-" + fake(_ALNUM, 16, "brevo2"),
        "shippo_live_" + fake(_HEX, 40, "shippo"), "duffel_test_" + fake(_URLSAFE, 43, "duffel"),
        "tk-us-" + fake(_URLSAFE, 48, "scalingo"), "fio-u-" + fake(_URLSAFE, 64, "frameio"),
        "tskey-api-" + fake(_ALNUM, 17, "ts1") + "-" + fake(_ALNUM, 32, "ts2"),
        "ops_eyJ" + fake(_URLSAFE, 200, "1password"), "bkua_" + fake(_HEX, 40, "buildkite"),
        # vendors' fixed prefixes from gitleaks' rule list, added with the short flags
        fake(_ALNUM, 14, "tfc1") + ".atlasv1." + fake(_URLSAFE, 67, "tfc2"),
        "sk.eyJ1IjoiYWNtZS1tYXBzIiwiYSI6Ij" + fake(_URLSAFE, 30, "mapbox1") + "." + fake(_URLSAFE, 22, "mapbox2"),
        "fm2_" + fake(_B64, 160, "fly") + "==", "fo1_" + fake(_URLSAFE, 43, "fly-org"),
        "LTAI" + fake(_ALNUM, 20, "alibaba"), "ico-" + fake(_ALNUM, 32, "infracost"), "CLOJARS_" + fake(_LOWER + _DIGITS, 60, "clojars"),
        "sm_pat_" + fake(_ALNUM, 16, "settlemint"), "sgp_" + fake(_HEX, 16, "sg1") + "_" + fake(_HEX, 40, "sg2"),
        "NRJS-" + fake(_HEX, 19, "nrjs"), "dnkey-" + fake(_LOWER + _DIGITS, 26, "dn1") + "-" + fake(_LOWER + _DIGITS, 52, "dn2"),
        "access-production-" + fake(_HEX, 8, "plaid1") + "-" + fake(_HEX, 4, "plaid2")
        + "-4" + fake(_HEX, 3, "plaid3") + "-a" + fake(_HEX, 3, "plaid4") + "-" + fake(_HEX, 12, "plaid5"),
        "s-s4t2ud-" + fake(_HEX, 64, "intra42"), "sha256~" + fake(_URLSAFE, 43, "openshift"), "p8e-" + fake(_ALNUM, 32, "adobe"),
        "dckr_pat_" + fake(_URLSAFE, 27, "dockerhub"),
        "dt0c01." + fake(_UPPER + _DIGITS, 24, "dt1") + "." + fake(_UPPER + _DIGITS, 64, "dt2"),
        "pat." + fake(_URLSAFE, 22, "harness1") + "." + fake(_HEX, 24, "harness2") + "." + fake(_ALNUM, 20, "harness3"),
    ]
    FLY_MACAROONS = "FlyV1 " + ",".join("fm2_" + fake(_B64, 180, f"flym{i}") + "=" for i in range(2))
    PASSWORD = fake(_ALNUM, 10, "pw") + "!" + fake(_ALNUM, 5, "pw2")
    DB_PASSWORD = fake(_ALNUM, 18, "dbpw")
    REDIS_PASSWORD = fake(_ALNUM, 24, "redispw")
    MONGO_PASSWORD = fake(_ALNUM, 16, "mongopw")
    NETRC_PASSWORD = fake(_ALNUM, 20, "netrc")
    CURL_PASSWORD = fake(_ALNUM, 14, "curl")
    DOCKER_PASSWORD = fake(_ALNUM, 16, "docker")
    DOCKER_AUTH = base64.b64encode(f"deploybot:{DOCKER_PASSWORD}".encode()).decode()
    DOCKERCONFIGJSON = base64.b64encode(json.dumps({"auths": {"registry.acme.io": {"auth": DOCKER_AUTH}}}).encode()).decode()
    ECR_TOKEN = "eyJwYXlsb2FkIjoi" + fake(_B64, 600, "ecr") + "=="
    NPM_AUTH = base64.b64encode(f"ci-user:{fake(_ALNUM, 16, 'npmauth')}".encode()).decode()
    KUBE_TOKEN = fake(_ALNUM, 64, "kube-token")
    KUBE_KEY_DATA = base64.b64encode(_pem("RSA ", RSA_BODY[:3]).encode()).decode()
    BASIC_HEADER = base64.b64encode(f"admin:{fake(_ALNUM, 14, 'basic')}".encode()).decode()
    API_KEY_HEADER = fake(_HEX, 40, "x-api-key")
    DJANGO_SECRET = fake(_ALNUM + "!@#%^&*(-_=+)", 50, "django")
    GENERIC_TOKEN = fake(_ALNUM, 40, "generic")
    MYSQL_PW = fake(_ALNUM, 14, "mysql")
    LOGIN_PW, LOGIN_PW2 = fake(_ALNUM, 18, "login"), fake(_ALNUM + "!#%", 12, "login2")
    SSHPASS_PW = fake(_ALNUM, 9, "sshpass") + " " + fake(_ALNUM, 6, "sshpass2")
    REDIS_CLI_PW = fake(_ALNUM, 32, "redis-cli")
    STORE_PW, KEY_PW = fake(_ALNUM, 12, "storepass"), fake(_ALNUM, 12, "keypass")
    HT_PW, HT_PW2 = fake(_ALNUM, 16, "htpasswd"), fake(_ALNUM, 11, "htpasswd2")
    OPENSSL_PW, GPG_PW = fake(_ALNUM, 20, "openssl"), fake(_ALNUM, 24, "gpg")
    SQL_PW, ZIP_PW, SMB_PW = fake(_ALNUM + "!#", 16, "sqlcmd"), fake(_ALNUM, 12, "zip"), fake(_ALNUM, 14, "smb")
    PG_PW, PG_PW2 = fake(_ALNUM, 20, "pgpass"), fake(_ALNUM + "!#%", 14, "pgpass2")
    MONGO_PW, SEVENZIP_PW, OSQL_PW = fake(_ALNUM, 18, "mongosh"), fake(_ALNUM + "#%", 15, "7z"), fake(_ALNUM, 13, "osql")
    AZ_KEY1, AZ_KEY2 = fake(_B64, 86, "az-key1") + "==", fake(_B64, 86, "az-key2") + "=="
    SPLIT_PW, SPLIT_TOKEN = fake(_ALNUM, 18, "split-pw"), fake(_ALNUM, 32, "split-token")

    # --- the layouts --------------------------------------------------------------------------------

    _gcp_json = json.dumps(GCP_SA, indent=2)
    _sts_json = json.dumps({"Credentials": {"AccessKeyId": STS_ID, "SecretAccessKey": STS_SECRET,
                                            "SessionToken": STS_TOKEN, "Expiration": "2026-12-06T11:04:05+00:00"},
                            "AssumedRoleUser": {"AssumedRoleId": "AROA3XFRBF535PLBIFPI4:ci",
                                                "Arn": "arn:aws:sts::123456789012:assumed-role/deploy/ci"}}, indent=4)
    _az_keys = [{"creationTime": "2026-11-02T09:14:51.337425+00:00", "keyName": name, "permissions": "FULL", "value": key}
                for name, key in (("key1", AZ_KEY1), ("key2", AZ_KEY2))]
    _sts_table = "\n".join([
        "-" * 70,
        "|" + "GetSessionToken".center(68) + "|",
        "+" + "-" * 68 + "+",
        "||" + "Credentials".center(66) + "||",
        "|+" + "-" * 19 + "+" + "-" * 46 + "+|",
        f"||  AccessKeyId     |  {STS_ID:<43} ||",
        f"||  Expiration      |  {'2026-12-06T11:04:05+00:00':<43} ||",
        f"||  SecretAccessKey |  {STS_SECRET:<43} ||",
        f"||  SessionToken    |  {STS_TOKEN_OLD} ||",
        "|+" + "-" * 19 + "+" + "-" * 46 + "+|",
    ])

    return [
        # --- AWS ------------------------------------------------------------------------------------
        Sample("aws", "credentials_ini",
               f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\nregion = eu-west-1\n\n"
               f"[ci]\naws_access_key_id={STS_ID}\naws_secret_access_key={STS_SECRET}\naws_session_token={STS_TOKEN}\n",
               (AWS_ID[4:], AWS_SECRET, STS_ID[4:], STS_SECRET, STS_TOKEN[16:])),
        Sample("aws", "env_exports",
               f"export AWS_ACCESS_KEY_ID={AWS_ID}\nexport AWS_SECRET_ACCESS_KEY=\"{AWS_SECRET}\"\n"
               f"export AWS_SESSION_TOKEN='{STS_TOKEN}'\nexport AWS_DEFAULT_REGION=us-east-1",
               (AWS_ID[4:], AWS_SECRET, STS_TOKEN[16:])),
        Sample("aws", "env_dump",
               f"HOME=/home/ci\nAWS_REGION=us-east-1\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\nPATH=/usr/bin:/bin\n"
               f"AWS_SESSION_TOKEN={STS_TOKEN_OLD}\nSHLVL=1",
               (AWS_SECRET, STS_TOKEN_OLD[12:])),
        Sample("aws", "sts_json", _sts_json, (STS_ID[4:], STS_SECRET, STS_TOKEN[16:])),
        Sample("aws", "cli_table", _sts_table, (STS_ID[4:], STS_SECRET, STS_TOKEN_OLD[12:])),
        Sample("aws", "cli_text", f"CREDENTIALS\t{STS_ID}\t2026-12-06T11:04:05+00:00\t{STS_SECRET}\t{STS_TOKEN}",
               (STS_ID[4:], STS_SECRET, STS_TOKEN[16:])),
        Sample("aws", "boto3_kwargs",
               f's3 = boto3.client(\n    "s3",\n    aws_access_key_id="{AWS_ID}",\n    aws_secret_access_key="{AWS_SECRET}",\n'
               f'    aws_session_token="{STS_TOKEN}",\n)',
               (AWS_ID[4:], AWS_SECRET, STS_TOKEN[16:])),
        Sample("aws", "configure_set",
               f"$ aws configure set aws_access_key_id {AWS_ID}\n$ aws configure set aws_secret_access_key {AWS_SECRET}",
               (AWS_ID[4:], AWS_SECRET)),
        # --- GCP ------------------------------------------------------------------------------------
        Sample("gcp", "service_account_file", _gcp_json, (GCP_KEY_ID, *RSA_BODY)),
        Sample("gcp", "service_account_escaped",
               json.dumps({"name": "projects/acme/secrets/deployer-key", "payload": {"data": json.dumps(GCP_SA)}}),
               (GCP_KEY_ID, *RSA_BODY)),
        Sample("gcp", "adc_authorized_user",
               json.dumps({"client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
                           "client_secret": GOOGLE_CLIENT_SECRET, "refresh_token": GOOGLE_REFRESH,
                           "type": "authorized_user"}, indent=2),
               (GOOGLE_CLIENT_SECRET[7:], GOOGLE_REFRESH[4:])),
        Sample("gemini", "env", f"GEMINI_API_KEY={GEMINI}\n# or: genai.configure(api_key=\"{GEMINI}\")", (GEMINI[4:],)),
        # --- Azure ----------------------------------------------------------------------------------
        Sample("azure", "storage_connection_string",
               f"AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={AZ_STORAGE};"
               "EndpointSuffix=core.windows.net\"", (AZ_STORAGE[:-2],)),
        Sample("azure", "sas_url",
               "https://acmelogs.blob.core.windows.net/exports/2026-12.csv?sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx"
               f"&se=2026-12-31T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={AZ_SAS_SIG_URL}",
               (AZ_SAS_SIG_URL,)),
        Sample("azure", "sas_connection_string",
               "BlobEndpoint=https://acmelogs.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&srt=o&sp=r"
               f"&se=2026-12-31T00:00:00Z&spr=https&sig={AZ_SAS_SIG_URL}", (AZ_SAS_SIG_URL,)),
        Sample("azure", "service_bus",
               "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
               f"SharedAccessKey={AZ_SB_KEY}", (AZ_SB_KEY[:-1],)),
        Sample("azure", "cosmos", f"AccountEndpoint=https://acme.documents.azure.com:443/;AccountKey={AZ_COSMOS};",
               (AZ_COSMOS[:-2],)),
        Sample("azure", "ad_client_secret_env",
               f"AZURE_TENANT_ID=72f988bf-86f1-41af-91ab-2d7cd011db47\nAZURE_CLIENT_ID=04b07795-8ddb-461a-bbee-02f9e1bf7b46\n"
               f"AZURE_CLIENT_SECRET={AZ_AD}", (AZ_AD,)),
        Sample("azure", "ad_sp_create_json",
               json.dumps({"appId": "04b07795-8ddb-461a-bbee-02f9e1bf7b46", "displayName": "ci-deployer",
                           "password": AZ_AD, "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47"}, indent=2), (AZ_AD,)),
        Sample("azure", "ad_secret_in_prose", f"The new client secret is {AZ_AD} - it expires in 90 days.", (AZ_AD,)),
        Sample("azure", "storage_keys_json", json.dumps(_az_keys, indent=2), (AZ_KEY1[:-2], AZ_KEY2[:-2])),
        Sample("azure", "storage_keys_table",
               "CreationTime                      KeyName    Permissions    Value\n"
               + "--------------------------------  ---------  -------------  " + "-" * 88 + "\n"
               + "\n".join(f"{k['creationTime']}  {k['keyName']:<9}  FULL           {k['value']}" for k in _az_keys),
               (AZ_KEY1[:-2], AZ_KEY2[:-2])),
        Sample("azure", "storage_keys_tsv", "\n".join(f"{k['creationTime']}\t{k['keyName']}\tFULL\t{k['value']}" for k in _az_keys),
               (AZ_KEY1[:-2], AZ_KEY2[:-2])),
        Sample("azure", "devops_pat", f"export AZURE_DEVOPS_EXT_PAT={AZ_DEVOPS_PAT}", (AZ_DEVOPS_PAT,)),
        # --- code hosts and registries --------------------------------------------------------------
        Sample("github", "gh_auth_token", f"$ gh auth token\n{GITHUB_OAUTH}\n", (GITHUB_OAUTH[4:],)),
        Sample("github", "remote_url", f"origin\thttps://x-access-token:{GITHUB_APP}@github.com/acme/api.git (fetch)",
               (GITHUB_APP[4:],)),
        Sample("github", "fine_grained", f"GITHUB_TOKEN={GITHUB_FINE}", (GITHUB_FINE[11:],)),
        Sample("github", "header", f"curl -H \"Authorization: token {GITHUB_PAT}\" https://api.github.com/user",
               (GITHUB_PAT[4:],)),
        Sample("gitlab", "pat", f"glab auth login --token {GITLAB_PAT}", (GITLAB_PAT[6:],)),
        Sample("gitlab", "runner_config", f"[[runners]]\n  name = \"ci\"\n  url = \"https://gitlab.com/\"\n  token = \"{GITLAB_RUNNER}\"",
               (GITLAB_RUNNER[5:],)),
        Sample("gitlab", "deploy_token_url", f"git clone https://gitlab+deploy-token-7:{GITLAB_DEPLOY}@gitlab.com/acme/app.git",
               (GITLAB_DEPLOY[5:],)),
        Sample("npm", "npmrc", f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={NPM}\n"
               f"//npm.acme.io/:_auth={NPM_AUTH}\nalways-auth=true", (NPM[4:], NPM_AUTH)),
        Sample("pypi", "pypirc", f"[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {PYPI}\n",
               (PYPI[5:],)),
        Sample("pypi", "twine_env", f"TWINE_USERNAME=__token__ TWINE_PASSWORD={PYPI} twine upload dist/*", (PYPI[5:],)),
        Sample("huggingface", "env", f"export HF_TOKEN={HF}\nhuggingface-cli login --token {HF_ORG}", (HF[3:], HF_ORG[8:])),
        Sample("docker", "config_json",
               json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": DOCKER_AUTH},
                                     "ghcr.io": {"auth": base64.b64encode(f"bot:{GITHUB_PAT}".encode()).decode()}}}, indent=2),
               (DOCKER_AUTH, base64.b64encode(f"bot:{GITHUB_PAT}".encode()).decode())),
        Sample("kubernetes", "secret_manifest",
           "apiVersion: v1\nkind: Secret\nmetadata:\n  name: regcred\ntype: kubernetes.io/dockerconfigjson\ndata:\n"
           f"  .dockerconfigjson: {DOCKERCONFIGJSON}\n  password: {base64.b64encode(DB_PASSWORD.encode()).decode()}\n",
           (DOCKERCONFIGJSON[12:], base64.b64encode(DB_PASSWORD.encode()).decode())),
    Sample("docker", "login_flag", f"docker login --username deploybot --password {DOCKER_PASSWORD} registry.acme.io",
               (DOCKER_PASSWORD,)),
        # --- payments, messaging, mail ----------------------------------------------------------------
        Sample("stripe", "keys", f"STRIPE_SECRET_KEY={STRIPE_LIVE}\nstripe.api_key = \"{STRIPE_RESTRICTED}\"\n"
               f"endpoint_secret = '{STRIPE_WEBHOOK}'", (STRIPE_LIVE[8:], STRIPE_RESTRICTED[8:], STRIPE_WEBHOOK[6:])),
        Sample("slack", "tokens", f"SLACK_BOT_TOKEN={SLACK_BOT}\nuser token: {SLACK_USER}\napp: {SLACK_APP}\n"
               f"rotated: {SLACK_ROTATING}", (SLACK_BOT[5:], SLACK_USER[5:], SLACK_APP[7:], SLACK_ROTATING[12:])),
        Sample("slack", "webhook", f"curl -X POST -d '{{\"text\":\"done\"}}' https://hooks.slack.com/services/{SLACK_HOOK_PATH}",
               (SLACK_HOOK_PATH,)),
        Sample("twilio", "env", f"TWILIO_ACCOUNT_SID={TWILIO_SID}\nTWILIO_AUTH_TOKEN={TWILIO_AUTH}\nTWILIO_API_KEY={TWILIO_KEY}",
               (TWILIO_AUTH, TWILIO_KEY[2:])),
        Sample("sendgrid", "python", f"sg = SendGridAPIClient('{SENDGRID}')", (SENDGRID[3:],)),
        Sample("mailchimp", "python", f"client.set_config({{\"api_key\": \"{MAILCHIMP}\", \"server\": \"us21\"}})", (MAILCHIMP,)),
        Sample("mailchimp", "bare", f"mailchimp key {MAILCHIMP}", (MAILCHIMP,)),
        Sample("discord", "bot_token", f"client.run('{DISCORD_BOT}')", (DISCORD_BOT,)),
        Sample("discord", "webhook", f"POST https://discord.com/api/webhooks/1186543210987654321/{DISCORD_HOOK_TOKEN}",
               (DISCORD_HOOK_TOKEN,)),
        Sample("telegram", "bot_url", f"curl https://api.telegram.org/bot{TELEGRAM}/getUpdates", (TELEGRAM[11:],)),
        Sample("telegram", "env", f"TELEGRAM_BOT_TOKEN={TELEGRAM}", (TELEGRAM[11:],)),
        # --- SaaS and infrastructure -----------------------------------------------------------------
        Sample("shopify", "tokens", f"SHOPIFY_ACCESS_TOKEN={SHOPIFY}\nshared secret: {SHOPIFY_SECRET}",
               (SHOPIFY[6:], SHOPIFY_SECRET[6:])),
        Sample("digitalocean", "doctl", f"doctl auth init --access-token {DO_PAT}\noauth: {DO_OAUTH}",
               (DO_PAT[7:], DO_OAUTH[7:])),
        Sample("databricks", "cfg", f"[DEFAULT]\nhost = https://adb-123.4.azuredatabricks.net\ntoken = {DATABRICKS}",
               (DATABRICKS[4:],)),
        Sample("databricks", "bare", f"using {DATABRICKS} for the workspace", (DATABRICKS[4:],)),
        Sample("doppler", "tokens", f"doppler configure set token {DOPPLER}\nservice account: {DOPPLER_SA}",
               (DOPPLER[6:], DOPPLER_SA[6:])),
        Sample("linear", "key", f"linear_client = LinearClient(\"{LINEAR}\")", (LINEAR[8:],)),
        Sample("notion", "keys", f"notion = Client(auth=\"{NOTION}\")\nold integration: {NOTION_OLD}",
               (NOTION[4:], NOTION_OLD[7:])),
        Sample("atlassian", "token", f"curl -u me@acme.io:{ATLASSIAN} https://acme.atlassian.net/rest/api/3/myself",
               (ATLASSIAN[12:],)),
        Sample("atlassian", "bare", f"new API token: {ATLASSIAN}", (ATLASSIAN[12:],)),
        Sample("postman", "key", f"newman run coll.json --postman-api-key {POSTMAN}\nPMAK: {POSTMAN}", (POSTMAN[5:],)),
        Sample("grafana", "tokens", f"GRAFANA_CLOUD_TOKEN={GRAFANA_CLOUD}\nservice account token {GRAFANA_SA}\nlegacy key {GRAFANA_API}",
               (GRAFANA_CLOUD[4:], GRAFANA_SA[5:], GRAFANA_API[8:])),
        Sample("sentry", "tokens", f"SENTRY_AUTH_TOKEN={SENTRY_ORG}\nuser token {SENTRY_USER}\n"
               f"sentry_sdk.init(dsn=\"https://{SENTRY_DSN_KEY}@o4504.ingest.sentry.io/4505\")",
               (SENTRY_ORG[7:], SENTRY_USER[7:], SENTRY_DSN_KEY)),
        Sample("vault", "tokens", f"$ vault login -method=userpass\nKey                  Value\n---                  -----\n"
               f"token                {VAULT}\ntoken_accessor       hmac-sha256\nbatch {VAULT_BATCH}",
               (VAULT[4:], VAULT_BATCH[4:])),
        *[Sample("vendor", key.split("_")[0].split("-")[0].split(".")[0], f"the dashboard shows {key} for this project",
                 (key[12:],)) for key in MORE_VENDORS],
        Sample("vendor", "list", "\n".join(f"- {key}" for key in MORE_VENDORS), tuple(k[12:] for k in MORE_VENDORS)),
        # --- model providers ----------------------------------------------------------------------------
        Sample("openai", "keys", f"OPENAI_API_KEY={OPENAI_PROJ}\nlegacy: {OPENAI_LEGACY}\nsvc {OPENAI_SVC}",
               (OPENAI_PROJ[8:], OPENAI_LEGACY[3:], OPENAI_SVC[11:])),
        Sample("anthropic", "keys", f"client = Anthropic(api_key=\"{ANTHROPIC}\")\nadmin: {ANTHROPIC_ADMIN}",
               (ANTHROPIC[13:], ANTHROPIC_ADMIN[15:])),
        Sample("groq", "key", f"GROQ_API_KEY={GROQ}\ngroq = Groq(api_key=\"{GROQ}\")", (GROQ[4:],)),
        Sample("xai", "key", f"curl https://api.x.ai/v1/models -H \"Authorization: Bearer {XAI}\"", (XAI[4:],)),
        # --- tokens, keys, credentials in general ----------------------------------------------------
        Sample("jwt", "cookie", f"Set-Cookie: session={JWT}; Path=/; HttpOnly", (JWT,)),
        Sample("jwt", "json", json.dumps({"access_token": JWT, "token_type": "Bearer", "expires_in": 3600}), (JWT,)),
        Sample("private_key", "rsa_pem", f"$ cat id_rsa.pem\n{RSA_PEM}", tuple(RSA_BODY)),
        Sample("private_key", "ec_pem", _pem("EC ", EC_BODY), tuple(EC_BODY)),
        Sample("private_key", "openssh", _pem("OPENSSH ", SSH_BODY), tuple(SSH_BODY)),
        Sample("private_key", "encrypted_pkcs8", _pem("ENCRYPTED ", RSA_BODY[1:]), tuple(RSA_BODY[1:])),
        Sample("private_key", "pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(PGP_BODY)
               + "\n=" + fake(_B64, 4, "pgpcrc") + "\n-----END PGP PRIVATE KEY BLOCK-----", tuple(PGP_BODY)),
        Sample("private_key", "putty_v3", "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
               + fake(_B64, 64, "ppkpub0") + "\n" + fake(_B64, 20, "ppkpub1") + "\nPrivate-Lines: 4\n" + "\n".join(PUTTY_PRIV)
               + "\nPrivate-MAC: " + fake(_HEX, 64, "ppkmac"), tuple(PUTTY_PRIV)),
        Sample("url_auth", "https", f"pip install git+https://builder:{PASSWORD}@git.acme.io/acme/lib.git", (PASSWORD,)),
        Sample("dsn", "postgres", f"DATABASE_URL=postgresql://app_user:{DB_PASSWORD}@db.internal:5432/app?sslmode=require",
               (DB_PASSWORD,)),
        Sample("dsn", "mongodb_srv", f"client = MongoClient(\"mongodb+srv://admin:{MONGO_PASSWORD}@cluster0.ab1cd.mongodb.net/?retryWrites=true\")",
               (MONGO_PASSWORD,)),
        Sample("dsn", "redis", f"r = redis.from_url('redis://:{REDIS_PASSWORD}@cache.internal:6379/0')", (REDIS_PASSWORD,)),
        Sample("dsn", "rediss_user", f"CELERY_BROKER_URL=rediss://default:{REDIS_PASSWORD}@eu1.upstash.io:6379", (REDIS_PASSWORD,)),
        Sample("dsn", "mysql_jdbc", f"jdbc:mysql://db:3306/app?user=root&password={DB_PASSWORD}&useSSL=true", (DB_PASSWORD,)),
        Sample("dsn", "ado_net", f"Server=tcp:acme.database.windows.net,1433;Database=app;User ID=sa;Password={DB_PASSWORD};Encrypt=True;",
               (DB_PASSWORD,)),
        Sample("dotenv", "file", f"# .env\nDEBUG=false\nSECRET_KEY='{DJANGO_SECRET}'\nDB_PASS={DB_PASSWORD}\n"
               f"API_TOKEN=\"{GENERIC_TOKEN}\"\nMAIL_PASSWORD={PASSWORD}\n", (DJANGO_SECRET, DB_PASSWORD, GENERIC_TOKEN, PASSWORD)),
        Sample("pgpass", "cat", f"$ cat ~/.pgpass\n# hostname:port:database:username:password\n"
               f"db.internal:5432:app:app_user:{PG_PW}\n*:*:*:replicator:{PG_PW2}\n", (PG_PW, PG_PW2)),
        Sample("pgpass", "heredoc", f"cat > ~/.pgpass <<'EOF'\nlocalhost:5432:*:postgres:{PG_PW}\nEOF\nchmod 600 ~/.pgpass",
               (PG_PW,)),
        Sample("pgpass", "echo", f"echo \"10.0.0.7:6432:billing:billing_rw:{PG_PW2}\" >> $HOME/.pgpass", (PG_PW2,)),
        Sample("pgpass", "pgpassfile", f"$ export PGPASSFILE=/etc/app/pgpass.conf && cat $PGPASSFILE\n"
               f"pg-primary.acme.internal:5432:reports:analyst:{PG_PW}", (PG_PW,)),
        Sample("netrc", "file", f"machine api.heroku.com\n  login me@acme.io\n  password {NETRC_PASSWORD}\n"
               f"machine github.com login bot password {GITHUB_PAT}", (NETRC_PASSWORD, GITHUB_PAT[4:])),
        Sample("kubeconfig", "token_and_key",
               "apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n"
               f"    token: {KUBE_TOKEN}\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n"
               f"    client-key-data: {KUBE_KEY_DATA}\n- name: basic\n  user:\n    username: admin\n    password: {PASSWORD}",
               (KUBE_TOKEN, KUBE_KEY_DATA[20:80], PASSWORD)),
        Sample("header", "bearer_http", f"GET /v1/orders HTTP/1.1\nHost: api.acme.io\nAuthorization: Bearer {GENERIC_TOKEN}\n",
               (GENERIC_TOKEN,)),
        Sample("header", "basic_curl_verbose", f"> GET / HTTP/2\n> authorization: Basic {BASIC_HEADER}\n> user-agent: curl/8.5.0",
               (BASIC_HEADER,)),
        Sample("header", "cookies", f"< HTTP/2 200\n< set-cookie: sessionid={GENERIC_TOKEN}; Path=/; HttpOnly; Secure\n"
           f"> Cookie: theme=dark; csrftoken=abc; session={PASSWORD}", (GENERIC_TOKEN, PASSWORD)),
    Sample("aws", "ecr_login", f"$ aws ecr get-login-password --region eu-west-1\n{ECR_TOKEN}", (ECR_TOKEN[16:],)),
    Sample("header", "x_api_key", f"curl -H 'X-API-Key: {API_KEY_HEADER}' https://api.acme.io/v2/items", (API_KEY_HEADER,)),
        Sample("header", "requests_dict", f"headers = {{\"Authorization\": f\"Bearer {GENERIC_TOKEN}\", \"Accept\": \"application/json\"}}",
               (GENERIC_TOKEN,)),
        Sample("cli_flag", "curl_user", f"curl -u admin:{CURL_PASSWORD} https://jenkins.acme.io/api/json", (CURL_PASSWORD,)),
        Sample("cli_flag", "curl_user_long", f"curl --user deploy:{CURL_PASSWORD} -X POST https://ci.acme.io/job/x/build",
               (CURL_PASSWORD,)),
        Sample("cli_flag", "mysql_short",
               f"mysql -h db.internal -u root -p{MYSQL_PW} app -e 'select 1'\n"
               f"mysqldump -uroot -p\"{MYSQL_PW}\" --single-transaction app > app.sql", (MYSQL_PW,)),
        Sample("cli_flag", "registry_login_short",
               f"docker login -u deploybot -p {LOGIN_PW} registry.acme.io\npodman login --username bot -p='{LOGIN_PW2}' quay.io",
               (LOGIN_PW, LOGIN_PW2)),
        Sample("cli_flag", "sshpass", f"sshpass -p '{SSHPASS_PW}' ssh -o StrictHostKeyChecking=no -p 2222 deploy@10.0.0.5",
               (SSHPASS_PW,)),
        Sample("cli_flag", "redis_cli",
               f"redis-cli -h cache.internal -p 6379 -a {REDIS_CLI_PW} --no-auth-warning INFO\nredis-cli --pass {REDIS_CLI_PW} ping",
               (REDIS_CLI_PW,)),
        Sample("cli_flag", "keytool",
               f"keytool -importkeystore -srckeystore a.p12 -srcstoretype PKCS12 -srcstorepass {STORE_PW} "
               f"-destkeystore b.jks -deststorepass {STORE_PW} -destkeypass {KEY_PW}", (STORE_PW, KEY_PW)),
        Sample("cli_flag", "htpasswd", f"htpasswd -cbB /etc/nginx/.htpasswd admin {HT_PW}\nhtpasswd -nb ci '{HT_PW2}'",
               (HT_PW, HT_PW2)),
        Sample("cli_flag", "openssl_gpg",
               f"openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{OPENSSL_PW}\n"
               f"gpg --batch --passphrase '{GPG_PW}' -d backup.tar.gpg", (OPENSSL_PW, GPG_PW)),
        Sample("cli_flag", "sqlcmd_bcp", f"sqlcmd -S tcp:db.acme.io,1433 -U sa -P '{SQL_PW}' -Q \"SELECT 1\"\n"
               f"bcp dbo.orders out orders.dat -S db.acme.io -U sa -P{SQL_PW} -c", (SQL_PW,)),
        Sample("cli_flag", "zip_smbclient", f"zip -r -P {ZIP_PW} backup.zip data/\nunzip -P {ZIP_PW} backup.zip\n"
               f"smbclient //fs01/share -U backup%{SMB_PW} -c 'put backup.zip'", (ZIP_PW, SMB_PW)),
        Sample("cli_flag", "mongo_7z_osql", f"mongosh \"mongodb://db.acme.io:27017/app\" -u admin -p {MONGO_PW}\n"
               f"mongodump --host db.acme.io -u backup -p='{MONGO_PW}' --out /tmp/dump\n"
               f"7z a -t7z -mhe=on -p{SEVENZIP_PW} backup.7z data/\n"
               f"osql -S db.acme.io -U sa -P {OSQL_PW} -Q \"SELECT 1\"", (MONGO_PW, SEVENZIP_PW, OSQL_PW)),
        Sample("flyio", "auth_header", f"curl -H 'Authorization: {FLY_MACAROONS}' https://api.machines.dev/v1/apps",
               tuple(t[4:60] for t in FLY_MACAROONS[6:].split(","))),
        Sample("cli_flag", "password_flag", f"mysqldump --user=root --password='{DB_PASSWORD}' app > dump.sql", (DB_PASSWORD,)),
        Sample("keyword", "go", f"const apiKey = \"{GENERIC_TOKEN}\"\npassword := \"{PASSWORD}\"", (GENERIC_TOKEN, PASSWORD)),
        Sample("keyword", "php_array", f"'db_password' => '{DB_PASSWORD}',", (DB_PASSWORD,)),
        Sample("keyword", "split_yaml", f"database:\n  host: db.internal\n  password:\n    {SPLIT_PW}\n  api_token: >-\n"
               f"    {SPLIT_TOKEN}\n  pool: 5", (SPLIT_PW, SPLIT_TOKEN)),
        Sample("keyword", "split_ini", f"[smtp]\nuser = mailer\npassword =\n    {SPLIT_PW}\nport = 587", (SPLIT_PW,)),
        Sample("keyword", "yaml", f"smtp:\n  host: smtp.acme.io\n  user: mailer\n  password: \"{PASSWORD}\"\n  api_key: {GENERIC_TOKEN}",
               (PASSWORD, GENERIC_TOKEN)),
    ]


CORPUS = corpus()


# --- contexts -----------------------------------------------------------------------------------

CONTEXTS = ("tool_result", "tool_args", "api_json", "assistant", "user")


def in_context(sample: Sample, context: str, n: int = 0) -> dict[str, Any]:
    """The message of a transcript that holds ``sample.text`` in ``context`` (OpenAI chat shape)."""
    text = sample.text
    if context == "tool_result":
        return {"role": "tool", "tool_call_id": f"r{n}", "content": f"$ cat ./{sample.layout}\n{text}\n[exit 0]"}
    if context == "tool_args":
        args = json.dumps({"command": f"cat > ./{sample.layout} <<'EOF'\n{text}\nEOF", "timeout": 30})
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"a{n}", "type": "function", "function": {"name": "terminal", "arguments": args}}]}
    if context == "api_json":
        body = json.dumps({"ok": True, "item": {"id": n, "kind": sample.layout, "content": text}})
        return {"role": "tool", "tool_call_id": f"j{n}", "content": body}
    if context == "assistant":
        return {"role": "assistant", "content": f"I found this in the repository:\n\n```\n{text}\n```\nI will use it for step {n}."}
    return {"role": "user", "content": f"here is what you asked for ({sample.layout}): {text} - go ahead"}


def context_text(sample: Sample, context: str) -> str:
    """The one string of ``in_context`` that holds the secret (what a sink redacts)."""
    message = in_context(sample, context)
    if context == "tool_args":
        return str(message["tool_calls"][0]["function"]["arguments"])
    return str(message["content"])


def leaked(secrets: tuple[str, ...] | list[str], blob: str | bytes) -> list[str]:
    """The secrets found in ``blob``, as they are or escaped in JSON once or twice."""
    out = []
    for secret in secrets:
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(json.dumps(secret)[1:-1])[1:-1]}
        if isinstance(blob, bytes):
            if any(f.encode() in blob for f in forms):
                out.append(secret)
        elif any(f in blob for f in forms):
            out.append(secret)
    return out


#: Texts that look close to a secret and must come out unchanged.
NOT_SECRETS: list[str] = [
    'api_key = os.getenv("OPENAI_API_KEY")',
    "token = os.environ['GITHUB_TOKEN']",
    "password = getpass.getpass()",
    "secret_key: str = Field(..., description='the key')",
    "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}",
    "export STRIPE_KEY=$STRIPE_KEY",
    "commit 3f9a1c0d2e4b5a6978c1d2e3f4a5b6c7d8e9f0a1 (HEAD -> main)",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request id 550e8400-e29b-41d4-a716-446655440000 done",
    "max_tokens=4096, temperature=0.2",
    "for key, value in sorted(mapping.items(), key=len):",
    "integrity sha512-Vp1Xw6dMyybQeW1jvo9DMMg6X2hs8aybTKYtFChvhVKtbjhcbEbSq1fRaGT9rMrc/mrnqWJKhy7owvm53e2Qkg==",
    "the password must be at least 12 characters long",
    "Use `curl -u USER:TOKEN` with your own token.",
    "see https://docs.python.org/3/library/secrets.html",
    "git log --oneline 87124c3..f7ac831",
    "def get_api_key(self) -> str: return self._api_key",
    "machine learning models need a password manager? no",
    "session = aio_http_client_session_factory(loop)",
    "rnd_seed_generator_value = 42",
    "the key-value-store-configuration-file is missing",
    "region tk-us-east-1-zone-a and ops_eyes_only flag",
    "import pscale_tkn_helpers_for_tests",
    # short flags that are not passwords, and commands that prompt
    "mysql -u root -p app_db",
    "mysql -h 127.0.0.1 -P 3306 -p",
    "docker run -p 8080:80 -p 127.0.0.1:5432:5432 postgres:16",
    "echo $CR_PAT | docker login ghcr.io -u bot --password-stdin",
    "sshpass -f ~/.ssh/pw.txt ssh -p 2222 deploy@10.0.0.5",
    "redis-cli -h cache -p 6379 ping",
    "keytool -list -keystore k.jks -storepass:env KEYSTORE_PASS",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "openssl rsa -in key.pem -passin env:KEY_PASS -passout file:pw.txt",
    "unzip -p archive.zip docs/readme.txt | head; zip -r out.zip src/",
    "smbclient //fs01/share -U backup -c ls",
    "sqlcmd -S db -E -Q \"SELECT 1\"",
    "mongosh -u admin -p --authenticationDatabase admin\n7z a -p backup.7z data/\nosql -E -S db",
    # documented placeholder shapes in docs and config samples, lookup keys, fetch modes
    "GROQ_API_KEY=your_groq_api_key\nTELEGRAM_BOT_TOKEN=<your-token>\nZAI_API_KEY=...",
    "echo 'GITHUB_TOKEN=ghp_xxx...' >> ~/.env\nSECRET_KEY=xxxxxxxx\n  - Token: gho_****************",
    "next_key: 1\nAUTH=\"gh\"\nfetch(url, { credentials: 'include' })",
    'curl -H "Authorization: token $GITHUB_TOKEN" https://api.github.com\nTOKEN=$(gh auth token)',
    "mysql -uroot -p$MYSQL_ROOT_PASSWORD",
    "docker login -u bot -p \"$REGISTRY_TOKEN\" registry.acme.io",
    # .pgpass-shaped lines with no .pgpass near, times, IPv6 addresses, paths
    "12:30:45:00:11 build started\nfe80::1:2:3:4 link-local\n/var/lib:5432:a:b:c",
    "db.internal:5432:app:app_user:written in a runbook",
    # a JSON value of 88 base64 characters with no az key listing near
    '{"digest": "sha512", "value": "' + "A1b2" * 21 + 'Xy=="}',
    # a keyword over a nested mapping, a list, another key, code
    "password:\n  secretKeyRef:\n    name: db\n    key: password",
    "auth:\n  - user\n  - admin",
    "token:\nretries: 3",
    "const password =\n  process.env.DB_PASSWORD;",
    "    if not token:\n        raise ValueError('no token')",
    # public or look-alike tokens
    "mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJjbHh4In0.AbCdEfGhIjKlMnOpQrStUv';",
    "fm2_embeddings_model and fo1_layer are layer names",
    "LTAIL_WIND_REPORTING_MODE and sgp_settings, dckr_ and s-s4t2 in a sentence",
    "see v1.0-beta and sha256~ in the docs; pat.get('x')",
]
