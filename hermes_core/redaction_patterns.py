"""The families ``hermes_core.redaction`` masks: one regex source per family, the vendor
prefixes, and the anchors its prefilter looks for. Data only: the redactor (one compiled pass,
the placeholders, the checks that tell code from a secret) is in ``redaction.py``, which
documents every family and what stays.
"""

from __future__ import annotations

# --- the families -----------------------------------------------------------------------------

#: Vendor prefixes, kept visible in front of the mask (the vendor helps a reader), by family.
#: The longest prefix of a family that matches names it (``sk-ant-`` before ``sk-``).
PREFIX_FAMILIES: tuple[tuple[str, str], ...] = (
    ("sk-ant-", "anthropic"),
    ("sk-", "openai"),
    ("github_pat_", "github"), ("ghp_", "github"), ("gho_", "github"), ("ghu_", "github"),
    ("ghs_", "github"), ("ghr_", "github"),
    ("glc_", "grafana"), ("glsa_", "grafana"), ("gl", "gitlab"), ("GR1348941", "gitlab"),
    ("xox", "slack"), ("xapp-", "slack"),
    ("AIza", "google_api_key"),
    ("AKIA", "aws_access_key_id"), ("ASIA", "aws_access_key_id"), ("ABIA", "aws_access_key_id"),
    ("ACCA", "aws_access_key_id"),
    ("hf_", "huggingface"), ("npm_", "npm"), ("pypi-", "pypi"),
    ("sk_", "stripe"), ("rk_", "stripe"), ("pk_", "stripe"), ("whsec_", "stripe"),
    ("sq0", "square"), ("AKC", "artifactory"),
    ("gsk_", "groq"), ("xai-", "xai"), ("fw_", "fireworks"), ("r8_", "replicate"),
    ("pplx-", "perplexity"), ("tvly-", "tavily"),
    ("ya29.", "google_oauth"), ("GOCSPX-", "google_oauth"), ("hv", "vault"), ("do", "digitalocean"),
    ("shp", "shopify"), ("lin_api_", "linear"), ("AGE-SECRET-KEY-1", "age"),
    ("dapi", "databricks"), ("dp.", "doppler"), ("ntn_", "notion"), ("secret_", "notion"), ("PMAK-", "postman"), ("sntry", "sentry"),
    ("eyJrIjoi", "grafana"), ("eyJhdXRocyI6", "docker_config"), ("eyJwYXlsb2FkIjoi", "aws_ecr_token"), ("ATATT3", "atlassian"),
    ("key-", "mailgun"), ("pul-", "pulumi"), ("sbp_", "supabase"), ("sb_secret_", "supabase"), ("sl.", "dropbox"),
    ("NRAK-", "newrelic"), ("HRKU-", "heroku"), ("CFPAT-", "contentful"), ("EZAK", "easypost"),
    ("FLWSECK", "flutterwave"), ("ATBB", "bitbucket"), ("CCIPAT_", "circleci"), ("pscale_", "planetscale"),
    ("rnd_", "render"), ("figd_", "figma"), ("lsv2_", "langsmith"), ("pcsk_", "pinecone"), ("tfp_", "typeform"),
    ("aio_", "adafruit"), ("pnu_", "prefect"), ("rdme_", "readme"), ("rubygems_", "rubygems"),
    ("xkeysib-", "brevo"), ("shippo_", "shippo"), ("duffel_", "duffel"), ("tk-us-", "scalingo"),
    ("fio-u-", "frameio"), ("tskey-", "tailscale"), ("ops_", "onepassword"), ("bkua_", "buildkite"),
    ("IQoJb3JpZ2lu", "aws_session_token"), ("FwoGZXIvYXdz", "aws_session_token"),
    ("FQoGZXIvYXdz", "aws_session_token"),
    ("fm", "flyio"), ("fo1_", "flyio"), ("LTAI", "alibaba"), ("ico-", "infracost"), ("CLOJARS_", "clojars"),
    ("sm_", "settlemint"), ("sgp_", "sourcegraph"), ("NRJS-", "newrelic"), ("NRII-", "newrelic"),
    ("dnkey-", "defined_networking"), ("access-", "plaid"), ("s-s4t2", "intra42"),
    ("sha256~", "openshift"), ("p8e-", "adobe"), ("dckr_", "docker_hub"),
)

# Every alternative of ``_ONE`` opens with a literal character or a character class, never with
# a group or a look-behind: sre then rules an alternative out at a position with one character
# test (we measured 24 alternatives at 280 ms/MB opening with a class, 1,350 opening with a
# group). A look-behind on the character before a match therefore comes after the first
# character, two characters wide (``e(?<![A-Za-z0-9_\-]e)yJ``: "the character before this ``e``
# is not ..."). The part a match keeps visible (a vendor prefix, ``AccountKey=``) is everything
# before the group ``<tag>_v``; a match masked whole ends with an empty group ``<tag>``, so the
# last group closed (``lastgroup``) names the alternative. An escaped line break (``\\n``,
# ``\\t``, ``\\r``: text inside a JSON string, as tool arguments are) counts as a boundary too.
#: Vendor key prefixes by first letter (the letter, then the rest of each prefix as a regex);
#: ``VENDOR_SRC`` tests the letter once and the look-behind once per letter, not per prefix.
#: A prefix that also opens identifiers (``aio_``, ``rnd_``) ends with ``_KEYLIKE``.
_KEYLIKE = (
    r"(?=[A-Za-z0-9_\-]{20})(?=[a-z_\-]{0,19}[A-Z0-9])(?![a-z0-9\-]*_[a-z0-9_\-]*(?![A-Za-z0-9_\-]))"
)
_VENDOR_PREFIXES: tuple[tuple[str, str], ...] = (
    ("s", r"k-(?:proj-|ant-(?:api\d\d-|admin\d\d-|oat\d\d-)?|svcacct-|admin-|or-v1-)?"),
    ("s", r"k_(?:live|test)_"), ("s", r"q0(?:csp|atp)-"), ("s", r"hp(?:at|ss|ca|pa)_"), ("s", r"ntryu_"),
    ("s", r"bp_(?=[0-9a-f]{40})"), ("s", r"l\.(?=[A-Za-z0-9_\-]{130})"),
    ("s", r"b_secret_" + _KEYLIKE), ("s", r"hippo_(?:live|test)_" + _KEYLIKE),
    ("s", r"ecret_(?=[A-Za-z]*[0-9])(?=[A-Za-z0-9]{43}(?![A-Za-z0-9_\-]))"),
    ("g", r"h[pousr]_"), ("g", r"ithub_pat_"), ("g", r"l(?:pat|ptt|dt|rt|ft|soat|cbt|imt|agent|oas)-"),
    ("g", r"sk_"), ("g", r"lsa_"),
    ("G", r"R1348941"), ("G", r"OCSPX-"),
    ("x", r"ox[abposre]-"), ("x", r"app-"), ("x", r"ai-"), ("x", r"keysib-" + _KEYLIKE),
    ("A", r"Iza"), ("A", r"KC(?=[A-Za-z0-9]{10})"), ("A", r"GE-SECRET-KEY-1"), ("A", r"TBB"),
    ("h", r"f_"), ("h", r"v[sb]\."),
    ("n", r"pm_"), ("n", r"tn_"),
    ("p", r"ypi-"), ("p", r"k_(?:live|test)_"), ("p", r"plx-"), ("p", r"ul-(?=[0-9a-f]{40})"),
    ("p", r"scale_(?:tkn|pw|oauth)_" + _KEYLIKE), ("p", r"csk_" + _KEYLIKE), ("p", r"nu_" + _KEYLIKE),
    ("r", r"k_(?:live|test)_"), ("r", r"8_"), ("r", r"nd_" + _KEYLIKE), ("r", r"dme_" + _KEYLIKE),
    ("r", r"ubygems_" + _KEYLIKE),
    ("w", r"hsec_"),
    ("f", r"w_"), ("f", r"igd_" + _KEYLIKE), ("f", r"io-u-" + _KEYLIKE),
    ("t", r"vly-"), ("t", r"fp_" + _KEYLIKE), ("t", r"k-us-" + _KEYLIKE), ("t", r"skey-(?:api-|auth-|client-)?" + _KEYLIKE),
    ("y", r"a29\."),
    ("d", r"o[por]_v1_"), ("d", r"api(?=[0-9a-f]{32})"), ("d", r"p\.(?:pt|st|sa|ct|scim|audit)\."),
    ("d", r"uffel_(?:live|test)_" + _KEYLIKE),
    ("l", r"in_api_"), ("l", r"sv2_(?:pt|sk)_(?=[0-9a-f]{32}_)"),
    ("P", r"MAK-"),
    ("k", r"ey-(?=[0-9a-f]{32})"),
    ("N", r"RAK-"), ("H", r"RKU-"), ("C", r"FPAT-"), ("C", r"CIPAT_"), ("E", r"ZAK"), ("F", r"LWSECK(?:_TEST)?-"),
    ("a", r"io_" + _KEYLIKE), ("o", r"ps_(?=eyJ)"), ("b", r"kua_" + _KEYLIKE),
)
#: More vendors' fixed prefixes (gitleaks' rule list, checked against the vendors' documented
#: lengths): an optional alternative (``MORE_VENDOR_ANCHORS``), so that their first letters
#: (``i``, ``L`` ...) cost nothing on a text that holds none of them.
_MORE_VENDOR_PREFIXES: tuple[tuple[str, str], ...] = (
    ("f", r"o1_(?=[A-Za-z0-9_\-]{43})"), ("L", r"TAI(?=[A-Z]{0,19}[a-z0-9])(?=[A-Za-z0-9]{16,20}(?![A-Za-z0-9_\-]))"),
    ("i", r"co-(?=[A-Za-z0-9]{32}(?![A-Za-z0-9_\-]))"), ("C", r"LOJARS_(?=[a-z0-9]{60})"),
    ("s", r"m_(?:pat|aat|sat)_(?=[a-z]{0,15}[A-Z0-9])(?=[A-Za-z0-9]{16}(?![A-Za-z0-9_\-]))"), ("s", r"gp_(?:local_|[a-fA-F0-9]{16}_)?(?=[a-fA-F0-9]{40})"),
    ("s", r"-s4t2(?:ud|af)-(?=[a-f0-9]{64})"), ("s", r"ha256~(?=[A-Za-z0-9_\-]{43})"),
    ("N", r"R(?:JS|II)-"), ("d", r"nkey-(?=[a-z0-9=_\-]{26}-)"), ("d", r"ckr_(?:pat|oat)_"),
    ("a", r"ccess-(?:sandbox|development|production)-(?=[0-9a-f]{8}-)"), ("p", r"8e-(?=[A-Za-z0-9]{32})"),
)


def _vendor_src(prefixes: tuple[tuple[str, str], ...], value: str) -> str:
    letters: dict[str, list[str]] = {}
    for letter, rest in prefixes:
        letters.setdefault(letter, []).append(rest)
    return (
        "[" + "".join(letters) + r"](?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))(?:"
        + "|".join(f"(?<={letter})(?:{'|'.join(rests)})" for letter, rests in letters.items())
        + ")" + value
    )


VENDOR_SRC = _vendor_src(_VENDOR_PREFIXES, r"(?P<v_v>[A-Za-z0-9_\-]{16,})")
# Keys whose value is standard base64 (``+ / =``): AWS session tokens (the same protobuf bytes
# open every one), Grafana Cloud, Sentry org and Atlassian tokens, a docker config (a Kubernetes
# ``.dockerconfigjson``: ``{"auths":`` in base64, registry passwords inside), an ECR login token.
_VENDOR_B64_SRC = _vendor_src(
    (("I", r"QoJb3JpZ2lu"), ("F", r"[wQ]oGZXIvYXdz"), ("g", r"lc_"), ("s", r"ntrys_"), ("A", r"TATT3"),
     ("e", r"yJhdXRocyI6"), ("e", r"yJwYXlsb2FkIjoi")),
    r"(?P<b_v>[A-Za-z0-9+/=_\-]{24,})",
)
# (and Fly.io's base64 macaroons ``fm2_``, ``fm1a_``, ``fm1r_``)
_MORE_VENDOR_SRC = (
    _vendor_src(_MORE_VENDOR_PREFIXES, r"(?P<v2_v>[A-Za-z0-9_\-]{16,})") + "|"
    + _vendor_src((("f", r"m(?:2|1[ar])_(?=[A-Za-z0-9+/]{64})"),), r"(?P<b2_v>[A-Za-z0-9+/=_\-]{24,})")
)
_MORE_VENDOR_ANCHORS = (
    "fo1_", "ltai", "ico-", "clojars_", "sm_pat_", "sm_aat_", "sm_sat_", "sgp_", "s-s4t2", "sha256~", "nrjs-", "nrii-",
    "dnkey-", "dckr_", "API-", "access-sandbox-", "access-development-", "access-production-", "p8e-",
    "fm2_", "fm1a_", "fm1r_",
)
AWS_ID_SRC = r"A(?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))(?:KIA|SIA|BIA|CCA)(?P<aid_v>[A-Z0-9]{16})(?![A-Za-z0-9])"
_PEM_SRC = (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)(?P<pem>)"
)
# PuTTY's key lines, also inside a JSON string (``\n`` escaped once or more).
_PUTTY_SRC = (
    r"Private-Lines: *\d+(?:\r?\n|(?:\\+r)?\\+n)"
    r"(?P<pty_v>(?:[A-Za-z0-9+/=]{1,64}(?:\r?\n|(?:\\+r)?\\+n|\Z))+)"
)
_GCP_KEY_ID_SRC = r"[\"']private_key_id\\*[\"'][ \t]*:[ \t]*\\*[\"'](?P<gcp_v>[A-Za-z0-9]{16,})"
# (and a Grafana API key: base64 JSON that opens ``{"k":"``, one part only)
_JWT_SRC = (
    r"e(?:(?<![A-Za-z0-9_\-].)|(?<=\\[nrt].))yJ(?:[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}(?P<jwt>)"
    r"|rIjoi(?P<gfk_v>[A-Za-z0-9+/=]{24,}))"
)
_SLACK_HOOK_SRC = r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<slk_v>[A-Za-z0-9/_\-]{8,})"
_SENDGRID_SRC = r"S(?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))G\.(?P<sg_v>[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,})"
_TWILIO_SRC = r"[SA][KC](?<=SK|AC)(?:(?<![A-Za-z0-9]..)|(?<=\\[nrt]..))(?P<tw_v>[0-9a-fA-F]{32})(?![A-Za-z0-9])"
_AZURE_SRC = (
    r"[AaSs](?i:(?<=a)ccountkey|(?<=s)haredaccess(?:key|signature))=(?P<az_v>[^;\s\"']+)"
)
_AZURE_AD_SRC = (
    r"[A-Za-z0-9_~.\-](?:(?<![A-Za-z0-9_~.\-].)|(?<=\\[nrt].))[A-Za-z0-9_~.\-]{2}\dQ~[A-Za-z0-9_~.\-]{31,34}"
    r"(?![A-Za-z0-9_~.\-])(?P<azad>)"
)
_MAILCHIMP_SRC = r"[0-9a-f](?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))[0-9a-f]{31}-us\d{1,2}(?![A-Za-z0-9])(?P<mc>)"
_TELEGRAM_SRC = r"\d(?:(?<![A-Za-z0-9:].)|(?<=\\[nrt].)|(?<=/bot.))\d{7,9}:AA[0-9A-Za-z_\-]{33}(?![A-Za-z0-9_\-])(?P<tg>)"
_SOFTLAYER_SRC = r"[Hh](?i:ttps?://api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/)(?P<sl_v>[a-z0-9]{64})"
_ARTIFACTORY_PW_SRC = r"A(?<![^\s=:\"']A)P[0-9A-F](?=[A-Za-z]*[0-9])[A-Za-z0-9]{8,}(?=[\s\"']|$)(?P<af>)"
_DISCORD_SRC = (
    r"[MNO](?:(?<![A-Za-z0-9_\-].)|(?<=\\[nrt].))[A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}"
    r"(?![A-Za-z0-9_\-])(?P<dc>)"
)
_DISCORD_HOOK_SRC = (
    r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<dwh_v>[A-Za-z0-9_\-]{40,})"
)
# A PEM block encoded in base64 (kubeconfig ``client-key-data``): masked when it decodes to a
# private key (``_replace``), a certificate stays.
_B64_PEM_SRC = r"L(?:(?<![A-Za-z0-9+/].)|(?<=\\[nrt].))S0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}(?P<bpem>)"
# curl -u user:password, --user user:password (a placeholder or a uid:gid stays: ``_replace``)
_CURL_SRC = (
    r"-(?:(?<![A-Za-z0-9-]-)|(?<=\\[nrt]-))(?:u|-user)(?:[ \t]+|=)\\*[\"']?[^\s:\"'\\]+:(?P<cu_v>[^\s\"'`\\]+)"
)
# .netrc: ``password value`` after ``machine``/``login`` (checked in ``_replace``).
_NETRC_SRC = r"[Pp](?:(?<![A-Za-z0-9_].)|(?<=\\[nrt].))assword[ \t]+(?P<nr_v>[^\s\"'\\]+)"
AWS_SECRET_SRC = r"[A-Za-z0-9/+](?:(?<![A-Za-z0-9/+=].)|(?<=\\[nrt].))[A-Za-z0-9/+]{39}(?![A-Za-z0-9/+=])(?P<aws>)"

# The keyword families are anchored on the secret word that ends the name, not on the name's
# start: matching from every identifier's start and backtracking to find the word cost ~300 ms/MB
# for each of the three forms. The word opens the name or follows a separator (``_ . -``) or,
# in camel case, a lower-case letter or digit; whatever comes before it is left as it is. Each
# kind of word opens with its own class of first characters, then checks the one before.
_WORDS = (
    # the words, any case, opening the name (after a character that is not a letter or digit)
    r"(?:[AaSsPpCcTt](?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))(?i:(?<=a)(?:pi[_-]?key|pikey|ccess[_-]?key|uth[_-]?token)"
    r"|(?<=s)ecret(?:[_-]?key)?|(?<=p)(?:rivate[_-]?key|assword|asswd|assphrase)"
    r"|(?<=c)(?:lient[_-]?secret|redentials?)|(?<=t)oken)"
    # key / pwd / pw only after a separator (``db_pw``), pass / auth anywhere a name starts
    r"|[KkPpAa](?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))(?i:(?<=[_.\-]k)ey|(?<=[_.\-]p)(?:wd?|at)|(?<=p)ass|(?<=a)uth)"
    # camel case: ``SecretAccessKey``, ``SessionToken`` (not after a capital), ``dbPassword``
    r"|[ASPMECRIB](?<![A-Z].)(?:(?<=A)(?:pi|ccess|uth|ccount)Key|(?<=S)(?:ecret|torage|igning)Key"
    r"|(?<=P)rivateKey|(?<=M)asterKey|(?<=E)ncryptionKey|(?<=C)lientKey|(?<=S)(?:ession|ecurity)Token"
    r"|(?<=A)(?:ccess|uth|pi)Token|(?<=R)efreshToken|(?<=I)dToken|(?<=B)(?:earer|ot)Token)"
    r"|[SP](?<=[a-z0-9].)(?:(?<=S)ecret|(?<=P)ass(?:word|wd|phrase))"
    r")"
)
# One alternative, four forms after the name:
#   NAME=value, NAME = "value", export NAME='value' (.env lines): a quoted value runs to its
#     closing quote, spaces included (not past an escaped line break ``\\n``: in a JSON string
#     that is the line's end); an unquoted one stops at the first space or separator;
#   "name": "value" / 'name': 'value' (JSON, Python dicts, YAML with quoted values);
#   name: value at the start of a line (YAML, .env-like listings, HTTP headers; checked in
#     ``_keyword``: the name must open its line);
#   name:/name = at the end of a line that opens with it, the value alone on the next line,
#     indented with spaces (a YAML plain or block scalar, an INI continuation; a tab opens a
#     Makefile recipe); a nested mapping or a list is not a value (``_keyword``).
# Quotes may be escaped (``\"``, once or more: a JSON string inside JSON, tool arguments).
_KEYWORD_SRC = (
    _WORDS + r"(?![A-Za-z0-9_.\-])(?:"
    r"(?P<as_e>[ \t]*=(?![=>])[ \t]*(?:\\+(?=[\"']))?)(?P<as_q>[\"'])?(?P<as_v>(?(as_q)(?:[^\"'\n\\]|\\(?![nrt]))+?|[^\s\"'&;,)\\]+))(?(as_q)\\*(?P=as_q))"
    r"|(?P<qp_e>\\*[\"']?[ \t]*:[ \t]*\\*)(?P<qp_q>[\"'])(?P<qp_v>[^\"'\n\\]+(?:\\+[^\"'\n\\]+)*?)\\*(?P=qp_q)"
    r"|(?P<ml_e>[ \t]*[=:][ \t]*(?:[|>][-+]?[ \t]*)?(?:\r?\n|(?:\\+r)?\\+n) +)(?P<ml_q>[\"'])?"
    r"(?P<ml_v>(?(ml_q)[^\"'\n\\]+|[^\s\"'#\-\[{&*!|>%@`\\][^\s\"'\\]*))(?(ml_q)(?P=ml_q))(?=[ \t\r]*(?:\n|\\+[nr]|$))"
    r"|(?P<ym_e>[ \t]*:[ \t]+)(?P<ym_v>[^\s#\"'](?:[^\s\\]|\\(?![nrt]))*)"
    r"|(?P<gp_e>(?:\\*[\"'])?[ \t]*(?::=|=>)[ \t]*\\*)(?P<gp_q>[\"'])(?P<gp_v>[^\"'\n\\]+)\\*(?P=gp_q))"
)
# --password value, --api-key=value
_FLAG_SRC = (
    r"-(?:(?<![A-Za-z0-9-]-)|(?<=\\[nrt]-))-?(?i:(?:[a-z0-9]+-)*(?:api-?key|access-key|secret|token|password|passwd|passphrase|pass(?:in|out)?|(?:src|dest)?(?:store|key)pass))"
    r"[= ](?P<fl_q>[\"']?)(?P<fl_v>[^\s\"']+)(?P=fl_q)"
)
_AUTH_SRC = (
    r"[Aa](?i:uthorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:bearer|basic|token|bot)?[ \t]*"
    r"(?P<ah_v>[^\s\"',;\\]{8,})"  # (a backslash escapes the closing quote in a JSON string)
)
_BEARER_SRC = r"[Bb](?:(?<![A-Za-z0-9].)|(?<=\\[nrt].))(?i:earer)[ \t]+(?P<br_v>[A-Za-z0-9._~+/=\-]{12,})"
# Credentials in a URL: ``scheme://user:password@`` and ``scheme://<token>@`` (the scheme and
# the user are kept).
_URL_SRC = r"://(?:[^/\s:@\"']*:(?P<uu_v>[^/\s@\"']+)|(?P<ut_v>[A-Za-z0-9_\-.~]{20,}))(?=@)"
_QUERY_SRC = (
    r"[?&;][ \t]?(?i:access_token|refresh_token|id_token|auth_token|token|api_key|apikey|key"
    r"|client_secret|secret|password|passwd|pwd|code|signature|sig|x-amz-signature"
    r"|x-amz-credential|x-amz-security-token|x-goog-signature|auth|sessionid|session_id|jsessionid"
    r"|phpsessid|session|sid|connect\.sid|_session)="
    r"(?P<qy_v>[^&#\s\"'<>;]+)"
)
# A ``Cookie:``/``Set-Cookie:`` header's first cookie (the later ones of a ``Cookie:`` header
# are masked when their name says session: ``_QUERY_SRC``).
_COOKIE_SRC = r"[Cc](?<![A-Za-z0-9_]C|[A-Za-z0-9_]c)(?i:ookie)[ \t]*:[ \t]*[^=\s;]+=(?P<ck_v>[^;\s\"']{8,})"

# Tokens with dots inside, the vendor's fixed part kept: Mapbox secret/temporary ``sk.``/``tk.`` +
# a JWT-like pair (public ``pk.`` tokens stay), Dynatrace ``dt0c01.``, Harness ``pat.``.
_B = r"(?:(?<![A-Za-z0-9_\-.].)|(?<=\\[nrt].))"  # after the first character: no word before it
_MAPBOX_SRC = r"[st]" + _B + r"k\.(?P<mb_v>eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,})"
_DYNATRACE_SRC = r"d" + _B + r"t0c01\.(?P<dt_v>[A-Z0-9]{24}\.[A-Z0-9]{64})"
_HARNESS_SRC = r"p" + _B + r"at\.(?P<hn_v>[A-Za-z0-9_\-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20})"
# Terraform Cloud / Enterprise API tokens: ``<14>.atlasv1.<60-70>``.
_TFC_SRC = r"[A-Za-z0-9]" + _B + r"[A-Za-z0-9]{13}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}(?![A-Za-z0-9_\-=])(?P<tfc>)"
# Password flags of known commands, by their documented syntax (the command on the same line,
# its other arguments between, re-scanned in ``_replace``): mysql/mariadb tools' ``-pVALUE``
# (no space: ``-p name`` prompts and names a database), ``docker|podman|... login -p VALUE``,
# ``sshpass -p VALUE`` (among sshpass' own options, before the command it runs), ``redis-cli -a
# VALUE``, ``htpasswd -b [file] user VALUE`` (``-n``: no file; checked in ``_replace``),
# ``sqlcmd|bcp|osql -P VALUE``, ``zip|unzip -P VALUE``, ``smbclient -U user%VALUE``.
# (an escaped quote inside a JSON string is an argument's, an escaped line break ends the command)
_ARGS = r"(?:[ \t](?:[^\n;|&\\]|\\(?![nrt])){0,200}?)?"


def _value(tag: str) -> str:
    # a quoted value runs to its closing quote, spaces included (quotes escaped in a JSON string too)
    return (rf"(?:\\*(?P<{tag}_q>[\"']))?(?P<{tag}_v>(?({tag}_q)[^\"'\n\\]+|[^\s\"'`;|&)<>\\\-][^\s\"'`;|&)<>\\]*))"
            rf"(?({tag}_q)\\*(?P={tag}_q))")


_MYSQL_SRC = (
    r"m" + _B + r"(?:ysql|ariadb)(?:-?(?:dump|admin|import|show|check|slap|binlog|pump))?(?:\.exe)?"
    + _ARGS + r"[ \t]-p" + _value("my")
)
_LOGIN_SRC = (  # opens at ``login``: the registry client's name is a look-behind
    r"l(?:(?<=docker l)|(?<=podman l)|(?<=buildah l)|(?<=skopeo l)|(?<=nerdctl l)|(?<=oras l)|(?<=registry l))ogin"
    + _ARGS + r"[ \t]-p(?:[ \t]+|=)?" + _value("dl")
)
_SSHPASS_SRC = r"s" + _B + r"shpass(?:[ \t]+(?:-[fdP][ \t]*[^\s\-]\S*|-[^\sp]\S*))*[ \t]+-p[ \t]*" + _value("sp")
_REDIS_CLI_SRC = r"r" + _B + r"edis-cli(?:\.exe)?" + _ARGS + r"[ \t]-a[ \t]+" + _value("rc")
_SQLCMD_SRC = r"[sbo]" + _B + r"(?:(?<=s)qlcmd|(?<=b)cp|(?<=o)sql)(?:\.exe)?" + _ARGS + r"[ \t]-P[ \t]*" + _value("sq")
# ``mongosh``/``mongo`` and the database tools' ``-p VALUE`` (``-p`` alone prompts), ``7z -pVALUE``
# (no space: ``7z`` reads ``-p`` alone as "ask").
_MONGO_SRC = (
    r"m" + _B + r"ongo(?:sh|dump|restore|export|import|stat|top|files)?(?:\.exe)?" + _ARGS
    + r"[ \t]-p(?:[ \t]+|=)" + _value("mg")
)
_SEVENZIP_SRC = r"7" + _B + r"z(?:a|r|z|g)?(?:\.exe)?" + _ARGS + r"[ \t]-p" + _value("sz")
_ZIP_SRC = r"[uz]" + _B + r"(?:(?<=u)nzip|(?<=z)ip)(?:\.exe)?" + _ARGS + r"[ \t]-P[ \t]+" + _value("zp")
_SMBCLIENT_SRC = r"s" + _B + r"mbclient" + _ARGS + r"[ \t](?:-U[ \t]*|--user[ =])[^\s%\"']+%" + _value("sb")
_HTPASSWD_SRC = (
    r"h" + _B + r"tpasswd(?P<ht_f>(?:[ \t]+-[A-Za-z]+(?:[ \t]+\d+)?)+)[ \t]+(?:[^\s\-\"'\\]\S*[ \t]+)?[^\s\-\"'\\]\S*[ \t]+"
    + _value("ht")
)

# ``az storage account keys list``: table and tsv rows (``key1  FULL  <88 base64>``; ``kerb1``
# for Kerberos keys) and, with ``keyName`` near (checked in ``_replace``), the JSON ``"value"``.
_AZ_KEYS_SRC = r"k(?:(?<![A-Za-z0-9_\-].)|(?<=\\[nrt].))(?:ey|erb)[12](?:[ \t]|\\+t)+(?:FULL|READ)(?:[ \t]|\\+t)+(?P<azk_v>[A-Za-z0-9+/]{86}==)"
_AZ_KEYS_JSON_SRC = r"v(?<=\"v)alue\\*\"[ \t]*:[ \t]*\\*\"(?P<azj_v>[A-Za-z0-9+/]{86}==)(?=\\*\")"
# A ``.pgpass`` line ``host:port:database:user:password`` (a port or ``*`` second: not a time,
# an IPv6 address or a path); masked only where the context names the file (``_replace``).
_PGPASS_FIELD = r"(?:[^:\s\\\"']|\\:)+"
PGPASS_ENTRY_SRC = _PGPASS_FIELD + r":(?:\d{1,5}|\*):" + _PGPASS_FIELD + ":" + _PGPASS_FIELD + ":"
_PGPASS_SRC = (
    r"[^\s:\\\"'](?:(?<![^\s\"'].)|(?<=\\[nrt].))(?:[^:\s\\\"']|\\:)*:(?:\d{1,5}|\*):"
    + _PGPASS_FIELD + ":" + _PGPASS_FIELD + ":" + r"(?P<pg_v>" + _PGPASS_FIELD + r"(?:[ \t]+" + _PGPASS_FIELD + r")*)"
    # the password runs to the line's end (or a closing quote): a rejected line hides nothing
    # that goes on past it
    r"(?=[ \t\r]*(?:\n|\\+[nr]|$)|\\*[\"'])"
)

# Order matters where two alternatives can start at the same place: the specific before the
# generic (a PEM block before a YAML line, a GCP key id before a quoted pair).
COMMON = (
    _PEM_SRC, _PUTTY_SRC, _GCP_KEY_ID_SRC, _JWT_SRC, _SLACK_HOOK_SRC, _SOFTLAYER_SRC, _SENDGRID_SRC,
    _TWILIO_SRC, _AZURE_SRC, AWS_ID_SRC, VENDOR_SRC, _VENDOR_B64_SRC, _DISCORD_HOOK_SRC, _B64_PEM_SRC,
    _URL_SRC, _QUERY_SRC, _COOKIE_SRC, _KEYWORD_SRC, _NETRC_SRC, _CURL_SRC, _FLAG_SRC, _AUTH_SRC, _BEARER_SRC,
)
#: Alternatives that would cost on every text (an AWS secret is any 40-character base64 run, an
#: Azure AD secret or a Mailchimp key any 3+/32 word characters ...), added to the one regex only
#: for a text that holds their anchor (``windows``), in this order.
OPTIONAL = {
    "azure_ad": _AZURE_AD_SRC, "mailchimp": _MAILCHIMP_SRC, "telegram": _TELEGRAM_SRC,
    "artifactory": _ARTIFACTORY_PW_SRC, "discord": _DISCORD_SRC, "terraform": _TFC_SRC,
    "pgpass": _PGPASS_SRC, "azure_keys": _AZ_KEYS_SRC + "|" + _AZ_KEYS_JSON_SRC, "vendors": _MORE_VENDOR_SRC,
    "mapbox": _MAPBOX_SRC, "dynatrace": _DYNATRACE_SRC, "harness": _HARNESS_SRC,
    "mysql": _MYSQL_SRC, "login": _LOGIN_SRC, "sshpass": _SSHPASS_SRC, "redis_cli": _REDIS_CLI_SRC,
    "htpasswd": _HTPASSWD_SRC, "sqlcmd": _SQLCMD_SRC, "zip": _ZIP_SRC, "smbclient": _SMBCLIENT_SRC,
    "mongo": _MONGO_SRC, "sevenzip": _SEVENZIP_SRC,
}

#: Family of each alternative without a vendor prefix (``v``/``aid`` are named by prefix).
GROUP_FAMILY = {
    "pem": "private_key", "pty": "private_key", "gcp": "gcp_private_key_id", "jwt": "jwt", "aws": "aws_secret",
    "slk": "slack_webhook", "sl": "softlayer", "sg": "sendgrid", "tw": "twilio", "az": "azure_storage_key",
    "azad": "azure_client_secret", "mc": "mailchimp", "tg": "telegram", "af": "artifactory",
    "uu": "basic_auth", "ut": "url_token", "qy": "url_token", "ck": "cookie", "ah": "authorization", "br": "bearer",
    "dc": "discord", "dwh": "discord_webhook", "bpem": "private_key", "cu": "basic_auth", "nr": "password",
    "mb": "mapbox", "dt": "dynatrace", "hn": "harness", "tfc": "terraform_cloud",
    "azk": "azure_storage_key", "azj": "azure_storage_key", "pg": "password",
    "my": "password", "dl": "password", "sp": "password", "rc": "password", "ht": "password",
    "sq": "password", "zp": "password", "sb": "password", "mg": "password", "sz": "password",
}
#: The alternatives of a command's password flag (``_MYSQL_SRC`` ... ``_HTPASSWD_SRC``).
COMMAND_GROUPS = frozenset({"my", "dl", "sp", "rc", "ht", "sq", "zp", "sb", "mg", "sz"})

#: Every match of ``_ONE`` holds one of these (in the lower-cased text): the secret word of a
#: keyword form, query parameter or flag, a vendor prefix, ``://`` of a URL, ``eyj`` of a JWT,
#: ``private`` of a PEM block ... A ``str.find`` for each costs a fraction of a regex pass, and
#: most lines of a session hold none of them.
ANCHORS = (
    "key", "token", "secret", "pass", "pw", "auth", "credential", "bearer", "sig=", "signature=", "code=",
    "sessionid=", "session_id=", "sessid=", "session=", "sid=", "cookie",
    "private", "://", "eyj", "sk-", "sk_", "rk_", "pk_", "whsec_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "glptt-", "gldt-", "glrt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-",
    "gloas-", "gr1348941", "xox", "xapp-", "aiza", "hf_", "npm_", "pypi-", "sq0", "akc", "xai-", "fw_",
    "r8_", "pplx-", "tvly-", "sg.", "-us", ":aa", "q~", "akia", "asia", "abia", "acca",
    "ya29.", "gocspx-", "hvs.", "hvb.", "dop_v1_", "doo_v1_", "dor_v1_", "shpat_", "shpss_", "shpca_", "shppa_",
    "lin_api_", "age-secret-key-1", "dapi", "dp.", "ntn_", "pmak-", "glc_", "glsa_", "sntry", "atatt3",
    "key-", "pul-", "sbp_", "sb_secret_", "sl.", "nrak-", "hrku-", "cfpat-", "ezak", "flwseck", "atbb",
    "ccipat_", "pscale_", "rnd_", "figd_", "lsv2_", "pcsk_", "tfp_", "aio_", "pnu_", "rdme_", "rubygems_",
    "xkeysib-", "shippo_", "duffel_", "tk-us-", "fio-u-", "tskey-", "bkua_",
    "qojb3jpz2lu", "fwogzxivyxdz", "fqogzxivyxdz", "ls0tls1crudjti", "-u ", "-u=", "--user",
    "pat=", "pat:", "pat ", "pat\"", "pat'", "pat\\",
    # (a part of the name where its first letter would be new to the anchors' search: an anchor
    # opening with a common letter, ``i`` or ``m``, costs ~15% on every text)
    "ysql", "ariadb", "login", "redis-cli", "atlasv1", "dt0c01.", "pat.",
    "fm2_", "fm1a_", "fm1r_", "fo1_", "ltai", "co-", "clojars_", "sm_pat_", "sm_aat_", "sm_sat_", "sgp_", "nrjs-",
    "nrii-", "access-sandbox-", "access-development-", "access-production-", "s-s4t2", "sha256~", "p8e-",
    "dckr_", "pgpass", "kerb1", "kerb2", "sqlcmd", "bcp ", "zip -", "smbclient", "sql -", "ngo",
    # (``zip -``, not ``zip``: Python's ``zip(`` and words holding "zip" put every such line
    # through the whole regex - 2.2x the redaction of a forced compaction's texts)
    # 7-Zip's commands after its name (``7z a``, ``7za x``): an anchor opening with a digit, ``7z``,
    # cost 3.5% on every text (digits are everywhere), one opening with ``z`` nothing measurable
    *(f"z{variant} {command} " for variant in ("", "a", "r") for command in "adeltux"),
)
#: Anchors that are only rare with their case (Twilio ``SK``/``AC``, Artifactory ``AP``).
CASED_ANCHORS = ("SK", "AC", "AP")
_AWS_ANCHORS = ("akia", "asia", "abia", "acca")
#: The optional alternative (``OPTIONAL``) each anchor brings into the regex.
ANCHOR_OPTIONAL = {
    **dict.fromkeys(_AWS_ANCHORS, "aws"), "q~": "azure_ad", "-us": "mailchimp", ":aa": "telegram", "AP": "artifactory",
    "atlasv1": "terraform", "pgpass": "pgpass", "keyname": "azure_keys", "\tfull\t": "azure_keys",
    "\\tfull\\t": "azure_keys", "k.eyj": "mapbox", "dt0c01.": "dynatrace", "pat.": "harness",
    "mysql": "mysql", "mariadb": "mysql", "login": "login", "sshpass": "sshpass",
    "redis-cli": "redis_cli", "htpasswd": "htpasswd", "sqlcmd": "sqlcmd", "bcp ": "sqlcmd", "zip -": "zip",
    "smbclient": "smbclient", "osql": "sqlcmd", "mongo": "mongo", "7z": "sevenzip",
    **dict.fromkeys(_MORE_VENDOR_ANCHORS, "vendors"),
}
