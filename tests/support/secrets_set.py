"""A labelled set for the secrets detector: true secrets in context, and look-alikes.

Secrets are generated (seeded, so the set is the same on every run) instead of
written out, so the repository holds no live-looking credential.  Each secret
sample is ``(kind, text, secret)``: ``secret`` must not survive redaction.
Each look-alike is ``(group, text)``: redaction must leave ``text`` unchanged.
"""

from __future__ import annotations

import base64
import random
import string
import uuid

__all__ = ["LOOKALIKES", "SECRETS"]

_rng = random.Random(20270111)
_ALNUM = string.ascii_letters + string.digits
_B64URL = _ALNUM + "-_"
_HEX = "0123456789abcdef"


def _rand(n: int, alphabet: str = _ALNUM) -> str:
    while True:
        out = "".join(_rng.choice(alphabet) for _ in range(n))
        # real random keys of this length hold every character class
        if alphabet is not _ALNUM or (
            any(c.isupper() for c in out)
            and any(c.islower() for c in out)
            and any(c.isdigit() for c in out)
        ):
            return out


def _b64(n: int) -> str:
    return base64.b64encode(_rng.randbytes(n)).decode()


def _pem(label: str) -> str:
    body = "\n".join(_b64(48) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = (
        base64.urlsafe_b64encode(f'{{"sub":"{_rand(10)}","iat":1700000000}}'.encode())
        .decode()
        .rstrip("=")
    )
    return f"{head}.{claims}.{_rand(43, _B64URL)}"


def _secrets() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []

    def add(kind: str, template: str, secret: str) -> None:
        out.append((kind, template.format(s=secret), secret))

    for _ in range(2):
        akia = "AKIA" + _rand(16, string.ascii_uppercase + string.digits)
        add("aws_access_key", "aws_access_key_id = {s}", akia)
        add("aws_access_key", "export AWS_ACCESS_KEY_ID={s}", "ASIA" + akia[4:])
        add("aws_secret_key", "aws_secret_access_key = {s}", _rand(40, _ALNUM + "+/"))
        add("aws_secret_key", "AWS_SECRET_ACCESS_KEY={s}", _rand(40, _ALNUM + "/"))
        add("github_token", "git clone https://{s}@github.com/acme/x.git", "ghp_" + _rand(36))
        add("github_token", "GITHUB_TOKEN: {s}", "github_pat_" + _rand(22) + "_" + _rand(59))
        add("github_token", "token {s} expires soon", "gho_" + _rand(36))
        add("github_token", "installation token: {s}", "ghs_" + _rand(36))
        add("gitlab_token", "PRIVATE-TOKEN: {s}", "glpat-" + _rand(20, _B64URL))
        add("gitlab_token", "remote: use {s} to push", "glpat-" + _rand(20))
        add("slack_token", "SLACK_BOT_TOKEN={s}", f"xoxb-{_rand(12, string.digits)}-{_rand(24)}")
        add(
            "slack_token",
            "client = WebClient(token='{s}')",
            f"xoxp-{_rand(11, string.digits)}-{_rand(32)}",
        )
        hook = f"https://hooks.slack.com/services/T{_rand(8, string.ascii_uppercase + string.digits)}/B{_rand(10, string.ascii_uppercase + string.digits)}/{_rand(24)}"
        add("slack_webhook", "curl -X POST {s} -d @msg.json", hook)
        add("stripe_key", "stripe.api_key = '{s}'", "sk_live_" + _rand(24))
        add("stripe_key", "STRIPE_RESTRICTED={s}", "rk_live_" + _rand(24))
        add("stripe_key", "use {s} in tests", "sk_test_" + _rand(24))
        add("openai_key", "OPENAI_API_KEY={s}", "sk-proj-" + _rand(74, _B64URL) + "A")
        add("openai_key", 'client = OpenAI(api_key="{s}")', "sk-" + _rand(48))
        add("openai_key", "Error: Incorrect API key provided: {s}.", "sk-svcacct-" + _rand(60))
        add("anthropic_key", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + _rand(93, _B64URL) + "AA")
        add("anthropic_key", "x-api-key: {s}", "sk-ant-admin01-" + _rand(93, _B64URL) + "AA")
        add("google_api_key", 'key = "{s}"', "AIza" + _rand(35, _B64URL))
        add("google_oauth", "Authorization header was {s}", "ya29." + _rand(60, _B64URL))
        add("jwt", "id_token={s}", _jwt())
        add("jwt", '{{"access": "{s}"}}', _jwt())
        add("pem_private_key", "key file:\n{s}\n", _pem("RSA PRIVATE KEY"))
        add("pem_private_key", "{s}", _pem("OPENSSH PRIVATE KEY"))
        add("pem_private_key", "cat ec.pem\n{s}", _pem("EC PRIVATE KEY"))
        add("pem_private_key", "{s}", _pem("ENCRYPTED PRIVATE KEY"))
        pgp = "\n".join(_b64(48) for _ in range(5))
        add(
            "pgp_private_key",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n-----END PGP PRIVATE KEY BLOCK-----",
            pgp,
        )
        half = "\n".join(_b64(48) for _ in range(3))
        add("pem_private_key", "{s}\n-----END PRIVATE KEY-----\n", half)  # BEGIN line elsewhere
        add("pem_private_key", "-----BEGIN PRIVATE KEY-----\n{s}", half + "x")  # END elsewhere
        pw = _rand(14, _ALNUM + "!#%^*")
        add("url_password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", pw)
        add("url_password", "mysql://root:{s}@127.0.0.1/shop", _rand(12))
        add("url_password", "mongodb+srv://svc:{s}@cluster0.x1y2z.mongodb.net/", _rand(16))
        add("url_password", "redis://:{s}@cache:6379/0", _rand(20))
        add("url_password", "fetching https://deploy:{s}@artifacts.acme.io/repo", _rand(10))
        add("kv_secret", "password={s}", "hunter2" + _rand(3))
        add("kv_secret", "DB_PASSWORD={s}", _rand(16, _ALNUM + "!@#"))
        add("kv_secret", "DB_PASS={s}", _rand(12))
        add("kv_secret", "  passphrase: {s}", "correct-horse-" + _rand(6))
        add("kv_secret", 'password = "{s}"', "Tr0ub4dor&" + _rand(2, string.digits))
        add("kv_secret", "client_secret: {s}", _rand(32, _B64URL))
        add("kv_secret", "mysql -u root --password={s} shop", "S3cr3t" + _rand(4))
        add("kv_secret", "SECRET_KEY='{s}'", "django-insecure-" + _rand(40, _B64URL))
        add("kv_secret", "TWILIO_AUTH_TOKEN={s}", _rand(32, _HEX))
        add("kv_secret", "DD_API_KEY={s}", _rand(32, _HEX))
        add("kv_secret", "X-Api-Key: {s}", _rand(40, _ALNUM))
        add(
            "kv_secret", "AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net", _b64(64)
        )
        add("json_secret", '{{"password": "{s}", "user": "admin"}}', "p@ss" + _rand(8))
        add("json_secret", '{{"client_secret":"{s}"}}', _rand(40, _B64URL))
        add("json_secret", '{{"access_token": "{s}", "token_type": "bearer"}}', _rand(40, _B64URL))
        add("json_secret", '{{"apiKey": "{s}"}}', _rand(32))
        add("json_secret", '"refresh_token": "{s}",', "1//" + _rand(60, _B64URL))
        add("authorization", "Authorization: Bearer {s}", _rand(40, _B64URL))
        add("authorization", '{{"headers": {{"Authorization": "Bearer {s}"}}}}', _rand(36))
        add("authorization", "curl -H 'Authorization: Basic {s}' https://x", _b64(18))
        add("authorization", "authorization: token {s}", _rand(40, _HEX))
        add("pypi_token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + _rand(60, _B64URL))
        add("pypi_token", "TWINE_PASSWORD={s}", "pypi-AgEIcHlwaS5vcmc" + _rand(80, _B64URL))
        add("sendgrid_key", "SENDGRID_API_KEY={s}", f"SG.{_rand(22, _B64URL)}.{_rand(43, _B64URL)}")
        add(
            "sendgrid_key",
            "sg = SendGridAPIClient('{s}')",
            f"SG.{_rand(22, _B64URL)}.{_rand(43, _B64URL)}",
        )
        add("twilio_sid", "account_sid = '{s}'", "AC" + _rand(32, _HEX))
        add("twilio_sid", "api key sid {s}", "SK" + _rand(32, _HEX))
        add("npm_token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _rand(36))
        add("npm_token", "NPM_TOKEN: {s}", "npm_" + _rand(36))
        add("huggingface_token", "HF_TOKEN={s}", "hf_" + _rand(34))
        add("huggingface_token", "login(token='{s}')", "hf_" + _rand(34))
        add("digitalocean_token", "DIGITALOCEAN_TOKEN={s}", "dop_v1_" + _rand(64, _HEX))
        add("shopify_token", "X-Shopify-Access-Token: {s}", "shpat_" + _rand(32, _HEX))
        add("mailchimp_key", "mailchimp key {s}", _rand(32, _HEX) + "-us12")
        add(
            "telegram_token",
            "bot = Bot('{s}')",
            f"{_rand(10, string.digits)}:AA{_rand(33, _B64URL)}",
        )
        add(
            "k8s_tls_key",
            "  tls.key: {s}",
            base64.b64encode(_pem("RSA PRIVATE KEY").encode()).decode(),
        )
        add("square_token", "SQUARE_ACCESS_TOKEN={s}", "EAAA" + _rand(60, _B64URL))
        add("square_token", "square token {s}", "sq0atp-" + _rand(22, _B64URL))
        add("databricks_token", "DATABRICKS_TOKEN={s}", "dapi" + _rand(32, _HEX))
        add("grafana_token", "GF_TOKEN {s}", "glsa_" + _rand(32) + "_" + _rand(8, _HEX))
        add("stripe_webhook", "endpoint secret {s}", "whsec_" + _rand(32))
        add(
            "discord_webhook",
            "post to {s}",
            f"https://discord.com/api/webhooks/{_rand(18, string.digits)}/{_rand(68, _B64URL)}",
        )
    # a key ending in PASS with a colon is a password, not a test result (review of stop 37)
    add("kv_secret", "DB_PASS: {s}", "Xk9#mPq2vL7w")
    add("kv_secret", '{{"DB_PASS": "{s}"}}', "Xk9mPq2vL7wZ")
    add("kv_secret", "      - SMTP_PASS: {s}", "hunter2hunter2")
    add("kv_secret", "PASS: {s}", "Xk9mPq2vL7wZ")
    # a passphrase after a password's key (held-out set 30: it stayed in the stash)
    add("kv_secret", "password={s}", "correct-horse-battery-staple")
    add("kv_secret", "export DB_PASSWORD={s}", "purple-monkey-dishwasher")
    return out


def _uuid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def _lookalikes() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    code = [
        "def connect(host: str, password: bytes | str) -> None:",
        "        self.password = password",
        "SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = ()",
        "    token: bytes",
        "    token: str | None = None",
        "    password = getpass.getpass()",
        '    api_key = os.environ["OPENAI_API_KEY"]',
        '    token = request.headers.get("Authorization")',
        "    secret_key = settings.SECRET_KEY",
        "    return cls(password=password, token=token)",
        "    if not password:",
        "        return self._token",
        "    access_key_id: str",
        "    private_key: rsa.PrivateKey",
        "        self.secret = secret",
        "    password: Optional[str] = None",
        "for token in tokens:",
        "    token = next(stream)",
        "    token = tokens[i]",
        '    creds = {"password": password, "user": user}',
        "    password_hash = bcrypt.hashpw(password, salt)",
        "    secret = load_secret(name)",
        "const apiKey = process.env.API_KEY;",
        "let token: string = await getToken();",
        "    private String password;",
        "    public void setPassword(String password) { this.password = password; }",
        'password := os.Getenv("DB_PASSWORD")',
        "    let token = parser.next_token()?;",
        "    tokenizer = AutoTokenizer.from_pretrained(name)",
        "    max_tokens=4096,",
        "    token_count = count_tokens(text)",
        "    auth = AuthHandler(config)",
        "    passwd = pwd.getpwnam(user)",
        '    secret_name: str = "db-credentials"',
        "    if token == expected_token:",
        "    credentials = service_account.Credentials.from_service_account_file(path)",
        '    api_key: str = Field(..., env="API_KEY")',
        '    token_url = f"{base}/oauth/token"',
        "class PasswordResetToken(Model):",
        "    password = models.CharField(max_length=128)",
        '    SECRET_KEY = env("SECRET_KEY")',
        "    token = self._tokens[self._pos]",
        '    "token": token,',
        "    password=cfg.password,",
        "    assert token.kind == TokenKind.NAME",
        "    passphrase: bytes | None = None,",
        "    auth_token: str | None = Header(default=None),",
        "    secret: typing.Optional[Secret] = None",
        "    token=${{ secrets.GITHUB_TOKEN }}",
        "      password: ${DB_PASSWORD}",
        "    PASSWORD=$(cat /run/secrets/db_password)",
        "    api_key = <your-api-key>",
        '    password: "{{ .Values.db.password }}"',
        # Go, Rust, C and JS taking an address, dereferencing or building a struct
        '\tauth := &socks.Auth{User: "u", Password: p}',
        "\ttoken := &oauth2.Token{AccessToken: access}",
        "    let auth = &mut self.authenticator;",
        "    secret = *secretStore.Lookup(name);",
        "    struct credentials *credentials = &ctx->creds;",
        "    const token = new TokenBucket({rate: 10});",
        "\tauth := &BasicAuthenticator{Realm: realm}",
    ]
    out += [("code", c) for c in code]
    uuids = [
        '"next_page_token": "{u}"',
        '{{"request_id": "{u}", "status": "ok"}}',
        "token={u}",
        '"token": "{u}",',
        "session {u} started",
        "X-Request-Id: {u}",
        "trace_id={u} span_id=1a2b3c",
        '"idempotency_key": "{u}"',
        "api_key_id: {u}",
        "secret_id={u}",
    ]
    for template in uuids:
        out += [("uuid", template.format(u=_uuid())) for _ in range(2)]
        out.append(("uuid", template.format(u=_uuid().upper())))
    idents = [
        "secretName: my-app-tls",
        "private_key_path=/home/dev/.ssh/id_ed25519",
        "token_budget=high",
        "token_limit=8k",
        "password_min_length=12",
        "token_type: bearer",
        "secretRef: app-secrets",
        "tokenEndpoint: https://login.example.com/oauth2/token",
        "password_file=/run/secrets/db",
        "token_file=/var/run/secrets/kubernetes.io/serviceaccount/token",
        "PWD=/home/dev/src/app",
        "OLDPWD=/home/dev",
        '"token_usage": {"prompt_tokens": 12, "completion_tokens": 40}',
        '"tokens": 1234',
        '{"token": " the", "logprob": -0.12}',
        '{"token": "Hello", "logprob": -1.5}',
        '"password_policy": "strict"',
        "secretKeyRef:",
        "      name: db-secret",
        "ssh -i ~/.ssh/id_rsa dev@host",
        "auth: true",
        "secret: true",
        "password: required",
        "token: none",
        "--password-stdin",
        "PasswordAuthentication no",
        "apiKeySource: header",
        "api_key_header=X-Api-Key",
        "private_key_file = keys/server.key",
        "access_key_rotation_days=90",
        "token_expiry=3600",
        "max_tokens=4096",
        "token_budget: 2000",
        "password.length >= 12",
        "ResetPasswordTokenService",
        "GITHUB_TOKEN_PERMISSIONS=read",
        "export PGPASSFILE=~/.pgpass",
        "skip-secret-scan=true",
        "tokenizer=cl100k_base",
        "auth_method=oauth2",
        # ids a log writes under a secret-sounding key (held-out set 5: the zap field
        # ``"auth":"auth_amex_19399"`` came back from a stash as [REDACTED:kv_secret])
        '{"level":"info","msg":"captured","auth":"auth_amex_19399","amount":4210}',
        "token=order-2024-0042",
        "api_key=Billing.v2.eu",
    ]
    out += [("identifier", t) for t in idents]
    branches = [
        "feature/sk-1234-implement-login-flow",
        "origin/sk-987-fix-token-refresh-on-expiry",
        "git checkout -b bugfix/sk-42-password-reset-email",
        "Switched to a new branch 'feat/ghp-migration-to-fine-grained-tokens'",
        "* main\n  feature/sk-5521-rotate-api-keys-nightly",
        "remotes/origin/release/sk-2024-11-hardening",
        "Merge branch 'sk-101-add-secret-scanning' into main",
        "task-sk-learn-pipeline-benchmarks",
        "pip install scikit-learn sk-video sk-learn-extras-toolkit",
        "xox-build-cache-cleanup",
        "AKIA-like ids are documented in docs/aws-keys.md",
        "glpat-prefix tokens are described in the GitLab docs",
        "ssh://git@github.com/acme/app.git",
        "https://github.com/acme/app/tree/feature/sk-77-new-auth-tokens",
        "hf_hub_download(repo_id=repo, filename=name)",
        "npm_config_cache=/tmp/npm",
        "SG.widget.render()",
        "ACCOUNT_STATUS_ACTIVE",
        "sq0-style tokens",
        "ya29 is the prefix of a Google OAuth token",
    ]
    out += [("branch", b) for b in branches]
    for _ in range(8):
        sha1 = "".join(_rng.choice(_HEX) for _ in range(40))
        sha256 = "".join(_rng.choice(_HEX) for _ in range(64))
        md5 = "".join(_rng.choice(_HEX) for _ in range(32))
        out += [
            ("hash", f"commit {sha1}"),
            ("hash", f"sha256:{sha256}"),
            ("hash", f'"etag": "{md5}"'),
            ("hash", f"{sha256}  dist/app.tar.gz"),
            ("hash", f"Merge: {sha1[:7]} {sha1[7:14]}"),
            ("hash", f'"integrity": "sha512-{_b64(64)}"'),
            ("hash", f"checksum={md5}"),
            ("hash", f"digest: sha256:{sha256}"),
        ]
    prose = [
        "The password must be at least 12 characters long.",
        "Rotate the API key every 90 days and never commit secrets.",
        "Your token has expired; run `gh auth login` again.",
        "Set the secret in the repository settings, not in code.",
        "Error: invalid token (401)",
        "The private key is stored in the HSM.",
        "authorization: required for /admin",
        "Authorization failed for user dev",
        "see https://docs.example.com/secrets#passwords",
        "we store a sha256 of the password, never the password itself",
    ]
    out += [("prose", p) for p in prose]
    out += [
        ("test output", "    --- PASS: TestDiscount/case_0 (0.00s)"),
        ("test output", "--- PASS: TestLogin/token_refresh_2 (0.01s)"),
        # automake's and meson's result lines (held-out set 14: the test's name was redacted
        # everywhere, ``-MT tests/test_parse.o`` in the compile lines above too)
        ("test output", "PASS: tests/test_parse\nFAIL: tests/test_store"),
        ("test output", "XPASS: tests/test_flaky2"),
        ("test output", "PASS: test-parse-config"),  # automake's test names are kebab-case
        ("config", "secret: db-credentials"),  # a Kubernetes secret's name
        (
            "test output",
            '{"Action":"output","Output":"    --- PASS: TestDiscount/case_0 (0.00s)\\n"}',
        ),
    ]
    return out


SECRETS: list[tuple[str, str, str]] = _secrets()
LOOKALIKES: list[tuple[str, str]] = _lookalikes()


def log_holding(text: str, lines: int = 60) -> str:
    """A service log of ``lines`` near-identical lines that all hold ``text`` (stashed in
    standard mode, so the text reaches the offload store)."""
    return (
        "\n".join(
            f"2025-01-01 12:00:{i % 60:02d} INFO worker {i} step {i * 7 % 900} ms: {text}"
            for i in range(lines)
        )
        + "\n"
    )
