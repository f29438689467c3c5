"""Port of core/src/main/scala/kafka/admin/FeatureCommand.scala (Kafka 2.8.2,
``bin/kafka-features.sh``): describes the cluster's supported and finalized features (KIP-584)
and upgrades or downgrades every finalized feature at once.

    bin/kafka-features.sh --bootstrap-server localhost:9092 --describe [--from-controller]
    bin/kafka-features.sh --bootstrap-server localhost:9092 --upgrade-all [--dry-run]
    bin/kafka-features.sh --bootstrap-server localhost:9092 --downgrade-all [--dry-run]

``--describe`` asks one broker's ApiVersions (v3) and prints a line per feature, Kafka's
(tab-separated; wrapped here):

    Feature: feature_a	SupportedMinVersion: 1	SupportedMaxVersion: 3
        FinalizedMinVersionLevel: 1	FinalizedMaxVersionLevel: 2	Epoch: 5

``--upgrade-all`` finalizes every feature the tool knows at its highest version (``[Add]`` or
``[Upgrade]``, never deleting one); ``--downgrade-all`` lowers every finalized feature to the
highest version the tool knows, deleting those it does not know (``[Downgrade]``,
``[Delete]``, never adding one). Each update is printed with its result (``Result: OK`` or
``Result: FAILED due to <exception>``), or, with ``--dry-run``, listed under "Expected feature
updates:" without being sent. The updates go to the controller in one UpdateFeatures request.

The features the tool knows: Kafka's tool knows those its own release supports
(BrokerFeatures.createDefault, empty in 2.8.2, as the broker's), which are the controller's
too. A kafka-py node's are configured (``supported.features``), so the tool takes the
supported features of the active controller, the node that validates the updates. Before a
rolling downgrade to a release that supports less, the operator names that release's
features as its nodes would be configured, ``supported.features=feature_a:1-2`` in the
``--command-config`` file: the tool then knows those (as Kafka's tool of the older release
would), and ``--downgrade-all`` lowers or deletes whatever is finalized beyond them.
``--describe`` asks any broker, as Kafka's; ``--from-controller`` (KIP-584's describe option,
which 2.8.2's tool does not offer) asks the active controller. Failures end the tool with
status 1: at least one failed update (after the lines), or one line on stderr for bad options
or an unreachable cluster.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Mapping

import click

from kafka_py.server.broker_features import SUPPORTED_FEATURES_CONFIG, parse_supported_features
from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    CommandError,
    client_configs,
    connect,
    handle_errors,
    load_props,
    print_usage_and_die,
    run_tool,
    validate_bootstrap_servers,
)

logger = logging.getLogger(__name__)

Out = Callable[[str], None]

_HELP = "This tool describes and updates finalized features."


class UpdateFeaturesException(CommandError):
    pass


@dataclasses.dataclass(frozen=True)
class FeatureMetadata:
    """What describeFeatures returns: supported and finalized version ranges and the epoch."""

    supported: Mapping[str, tuple[int, int]]
    finalized: Mapping[str, tuple[int, int]]
    epoch: int | None


@dataclasses.dataclass(frozen=True)
class FeatureUpdate:
    max_version_level: int
    allow_downgrade: bool


def _pad(op: str) -> str:
    return f"{op:>11}"


ADD_OP, UPGRADE_OP, DELETE_OP, DOWNGRADE_OP = (_pad("[Add]"), _pad("[Upgrade]"), _pad("[Delete]"),
                                               _pad("[Downgrade]"))


def exception_text(error_code: int, message: str | None) -> str:
    """An UpdateFeatures error as Java prints the exception Kafka's admin client makes of it."""
    from kafka_py.clients.common.protocol.errors import Errors

    try:
        error = Errors.for_code(error_code)
    except (KeyError, ValueError):
        return f"org.apache.kafka.common.errors.UnknownServerException: Unknown error code {error_code}"
    name = error.exception_name or "UnknownServerException"
    return f"org.apache.kafka.common.errors.{name}: {message or error.message}"


def describe_lines(metadata: FeatureMetadata) -> list[str]:
    lines = []
    epoch = "-" if metadata.epoch is None else str(metadata.epoch)
    for feature in sorted(set(metadata.supported) | set(metadata.finalized)):
        s_min, s_max = metadata.supported.get(feature, ("-", "-"))
        f_min, f_max = metadata.finalized.get(feature, ("-", "-"))
        lines.append(f"Feature: {feature}\tSupportedMinVersion: {s_min}\tSupportedMaxVersion: {s_max}"
                     f"\tFinalizedMinVersionLevel: {f_min}\tFinalizedMaxVersionLevel: {f_max}\tEpoch: {epoch}")
    return lines


def upgrade_all_updates(known: Mapping[str, tuple[int, int]], metadata: FeatureMetadata
                        ) -> dict[str, tuple[str, FeatureUpdate]]:
    """Every known feature at its highest version: added when not finalized, upgraded when
    finalized lower; nothing deleted."""
    updates: dict[str, tuple[str, FeatureUpdate]] = {}
    for feature, (_, target_max) in known.items():
        existing = metadata.finalized.get(feature)
        if existing is None:
            updates[feature] = (f"{ADD_OP}\tFeature: {feature}\tExistingFinalizedMaxVersion: -"
                                f"\tNewFinalizedMaxVersion: {target_max}", FeatureUpdate(target_max, False))
        elif target_max > existing[1]:
            updates[feature] = (f"{UPGRADE_OP}\tFeature: {feature}\tExistingFinalizedMaxVersion: {existing[1]}"
                                f"\tNewFinalizedMaxVersion: {target_max}", FeatureUpdate(target_max, False))
    return updates


def downgrade_all_updates(known: Mapping[str, tuple[int, int]], metadata: FeatureMetadata
                          ) -> dict[str, tuple[str, FeatureUpdate]]:
    """Every finalized feature lowered to its highest known version, deleted when unknown;
    nothing added."""
    updates: dict[str, tuple[str, FeatureUpdate]] = {}
    for feature, (_, existing_max) in metadata.finalized.items():
        target = known.get(feature)
        if target is None:
            updates[feature] = (f"{DELETE_OP}\tFeature: {feature}\tExistingFinalizedMaxVersion: {existing_max}"
                                f"\tNewFinalizedMaxVersion: -", FeatureUpdate(0, True))
        elif target[1] < existing_max:
            updates[feature] = (f"{DOWNGRADE_OP}\tFeature: {feature}\tExistingFinalizedMaxVersion: {existing_max}"
                                f"\tNewFinalizedMaxVersion: {target[1]}", FeatureUpdate(target[1], True))
    return updates


class FeatureApis:
    """The admin calls the tool makes, over kafka-python's KafkaAdminClient connections."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin

    def describe_features(self, from_controller: bool = False) -> FeatureMetadata:
        from kafka.protocol.metadata import ApiVersionsRequest

        request = ApiVersionsRequest(client_software_name="kafka-features", client_software_version="2.8.2",
                                     min_version=3)
        manager = self.admin._manager

        async def send() -> Any:
            if from_controller:
                return await self.admin._send_request_to_controller(request)
            return await manager.send(request)

        response = manager.run(send)
        if response.error_code:
            raise CommandError(exception_text(response.error_code, None))
        epoch = response.finalized_features_epoch
        return FeatureMetadata(
            {f.name: (f.min_version, f.max_version) for f in (response.supported_features or ())},
            {f.name: (f.min_version_level, f.max_version_level) for f in (response.finalized_features or ())},
            None if epoch is None or epoch < 0 else epoch)

    def update_features(self, updates: Mapping[str, FeatureUpdate]) -> dict[str, tuple[int, str | None]]:
        """UpdateFeatures to the controller; each feature's error code and message."""
        import kafka.errors as kafka_errors
        from kafka.protocol.admin import UpdateFeaturesRequest

        key = UpdateFeaturesRequest.FeatureUpdateKey
        request = UpdateFeaturesRequest(
            timeout_ms=60_000, max_version=0,
            feature_updates=[key(feature=name, max_version_level=u.max_version_level,
                                 allow_downgrade=u.allow_downgrade) for name, u in updates.items()])
        response = self.admin._manager.run(
            self.admin._send_request_to_controller, request,
            lambda r: [kafka_errors.for_code(r.error_code)], False)
        if response.error_code:
            return {name: (response.error_code, response.error_message) for name in updates}
        results = {r.feature: (r.error_code, r.error_message) for r in response.results}
        return {name: results.get(name, (0, None)) for name in updates}


def maybe_apply_feature_updates(apis: FeatureApis, updates: Mapping[str, tuple[str, FeatureUpdate]],
                                dry_run: bool, out: Out) -> None:
    if dry_run:
        out("Expected feature updates:" + "\n".join(text for _, (text, _) in sorted(updates.items())))
        return
    results = apis.update_features({name: update for name, (_, update) in updates.items()})
    failures = 0
    for feature in sorted(results):
        error_code, message = results[feature]
        text = updates[feature][0]
        if error_code == 0:
            out(f"{text}\tResult: OK")
        else:
            out(f"{text}\tResult: FAILED due to {exception_text(error_code, message)}")
            failures += 1
    if failures:
        raise UpdateFeaturesException(f"{failures} feature updates failed!")


def known_features(text: str) -> dict[str, tuple[int, int]]:
    """``supported.features`` of --command-config (``name:min-max`` items, comma-separated) as
    the tool's known features; CommandError naming the key and the bad item."""
    from kafka_py.clients.common.config.config_def import ConfigException

    try:
        parsed = parse_supported_features(text.split(","))
    except ConfigException as e:
        raise CommandError(f"--command-config: {e}") from None
    return {name: (r.min_version, r.max_version) for name, r in parsed.items()}


def admin_client(bootstrap_server: str, command_config: Mapping[str, str]) -> Any:
    from kafka import KafkaAdminClient

    props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **command_config,
             "bootstrap.servers": bootstrap_server}
    configs = client_configs(props, KafkaAdminClient)
    configs.setdefault("client_id", "kafka-features")
    return connect(KafkaAdminClient, configs)


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120}, help=_HELP)
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="REQUIRED: A comma-separated list of host:port pairs to use for establishing the connection to "
                   "the Kafka cluster.")
@click.option("--command-config", metavar="<command config property file>",
              help="Property file containing configs to be passed to Admin Client. This is used with "
                   "--bootstrap-server option when required.")
@click.option("--describe", is_flag=True, help="Describe supported and finalized features from a random broker.")
@click.option("--from-controller", is_flag=True,
              help="With --describe: describe the features as the active controller sees them.")
@click.option("--upgrade-all", is_flag=True,
              help="Upgrades all finalized features to the maximum version levels known to the tool. This command "
                   "finalizes new features known to the tool that were never finalized previously in the cluster, "
                   "but it is guaranteed to not delete any existing feature.")
@click.option("--downgrade-all", is_flag=True,
              help="Downgrades all finalized features to the maximum version levels known to the tool. This command "
                   "deletes unknown features from the list of finalized features in the cluster, but it is "
                   "guaranteed to not add a new feature.")
@click.option("--dry-run", is_flag=True,
              help="Performs a dry-run of upgrade/downgrade mutations to finalized feature without applying them.")
@click.pass_context
@handle_errors()
def main(ctx: click.Context, bootstrap_server: str | None, command_config: str | None, describe: bool,
         from_controller: bool, upgrade_all: bool, downgrade_all: bool, dry_run: bool) -> None:
    if not any(ctx.params.values()):
        print_usage_and_die(_HELP)
    if sum((describe, upgrade_all, downgrade_all)) != 1:
        print_usage_and_die("Command must include exactly one action: --describe, --upgrade-all, --downgrade-all.")
    if not bootstrap_server:
        print_usage_and_die("Missing required argument \"[bootstrap-server]\"")
    if dry_run and not (upgrade_all or downgrade_all):
        print_usage_and_die("Command can contain --dry-run option only when either --upgrade-all or "
                            "--downgrade-all actions are provided.")
    if from_controller and not describe:
        print_usage_and_die("Command can contain --from-controller option only with the --describe action.")
    validate_bootstrap_servers(bootstrap_server)
    props = load_props(command_config) if command_config else {}
    # not an admin client setting: the features of the release the tool speaks for
    tool_features = props.pop(SUPPORTED_FEATURES_CONFIG, None)
    known_override = None if tool_features is None else known_features(tool_features)
    admin = admin_client(bootstrap_server, props)
    try:
        apis = FeatureApis(admin)
        metadata = apis.describe_features(from_controller or not describe)
        if describe:
            for line in describe_lines(metadata):
                click.echo(line)
            return
        known = metadata.supported if known_override is None else known_override
        updates = (upgrade_all_updates if upgrade_all else downgrade_all_updates)(known, metadata)
        if updates:
            maybe_apply_feature_updates(apis, updates, dry_run, click.echo)
    finally:
        admin.close()


if __name__ == "__main__":
    run_tool(main, "kafka-features.sh")
