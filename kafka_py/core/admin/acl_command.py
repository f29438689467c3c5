"""Port of core/src/main/scala/kafka/admin/AclCommand.scala (``bin/kafka-acls.sh``, Kafka 2.8.2).

Adds, removes and lists ACLs, with Kafka's options and output::

    bin/kafka-acls.sh --bootstrap-server localhost:9092 --add --allow-principal User:alice \\
        --operation Read --topic orders
    bin/kafka-acls.sh --bootstrap-server localhost:9092 --add --allow-principal User:bob \\
        --producer --topic orders-  --resource-pattern-type prefixed --idempotent
    bin/kafka-acls.sh --bootstrap-server localhost:9092 --list --topic orders --resource-pattern-type match
    bin/kafka-acls.sh --bootstrap-server localhost:9092 --remove --force --topic orders

Through a broker (``--bootstrap-server``, with ``--command-config`` for a client that must log
in: ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``, PEM
``ssl.truststore.location``) the tool sends CreateAcls, DeleteAcls and DescribeAcls; with
``--authorizer-properties zookeeper.connect=host:2181`` instead it runs the authorizer itself
against ZooKeeper, as Kafka's tool does when given no bootstrap server (``--authorizer`` names
the class, kafka.security.authorizer.AclAuthorizer by default).

``--producer`` stands for Write, Describe and Create on the topics (and Write, Describe on the
``--transactional-id``s, IdempotentWrite on the cluster with ``--idempotent``); ``--consumer``
for Read and Describe on the topics and Read on the ``--group``s. A principal's hosts default
to ``*``. Removing without ``--force`` asks for confirmation on the terminal.

A failure ends the tool with ``Error while executing ACL command: <error>`` and status 1;
options that do not fit together print Kafka's usage message and exit with status 2.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import click

from kafka_py.core.security.authorizer import acl_entry
from kafka_py.core.security.authorizer.acl import (
    ANY_BINDING_FILTER,
    ANY_ENTRY_FILTER,
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    parse_kafka_principal,
)
from kafka_py.core.utils.command_line_utils import (
    DEFAULT_BOOTSTRAP_TIMEOUT_MS,
    CommandError,
    client_configs,
    connect,
    error_message,
    handle_errors,
    load_props,
    parse_key_value_args,
    run_tool,
    send_admin_request,
    validate_bootstrap_servers,
)

CLUSTER_RESOURCE_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
DEFAULT_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
NEWLINE = "\n"

Out = Callable[[str], None]


class AclCommandError(CommandError):
    """An error of the command itself: ``Error while executing ACL command: ...``."""


def _broker_error(error_code: int, message: Optional[str]) -> AclCommandError:
    """A broker's error as Kafka's tool shows it: the exception's name and message."""
    from kafka_py.clients.common.protocol.errors import Errors

    try:
        name = Errors.for_code(int(error_code)).exception_name
    except (KeyError, ValueError):
        name = f"error code {error_code}"
    return AclCommandError(f"{name}: {error_message(error_code, message)}")


def _entries_text(acls: Iterable[AccessControlEntry]) -> str:
    return NEWLINE.join("\t" + str(acl) for acl in acls)


# ---------------------------------------------------------------------------- options


class AclCommandOptions:
    def __init__(self, values: Mapping[str, Any]) -> None:
        self.v = dict(values)

    def has(self, name: str) -> bool:
        value = self.v.get(name)
        if isinstance(value, (tuple, list)):
            return len(value) > 0
        return value not in (None, False)

    @property
    def pattern_type(self) -> PatternType:
        return self.v["resource_pattern_type"]

    def check_args(self) -> None:
        usage = click.UsageError
        if self.has("bootstrap_server") and self.has("authorizer"):
            raise usage("Only one of --bootstrap-server or --authorizer must be specified")
        if not self.has("bootstrap_server") and not self.has("authorizer_properties"):
            raise usage("Missing required argument \"[authorizer-properties]\"")
        if self.has("command_config") and not self.has("bootstrap_server"):
            raise usage("The --command-config option can only be used with --bootstrap-server option")
        if self.has("authorizer_properties") and self.has("bootstrap_server"):
            raise usage("The --authorizer-properties option can only be used with --authorizer option")
        if sum(1 for a in ("add", "remove", "list") if self.has(a)) != 1:
            raise usage("Command must include exactly one action: --list, --add, --remove. ")
        self._check_invalid("list", ("producer", "consumer", "allow_host", "allow_principal", "deny_host",
                                     "deny_principal"))
        # --producer and --consumer infer the operations, and allow only
        self._check_invalid("producer", ("operation", "deny_principal", "deny_host"))
        self._check_invalid("consumer", ("operation", "deny_principal", "deny_host"))
        if self.has("principal") and not self.has("list"):
            raise usage("The --principal option is only available if --list is set")
        if self.has("producer") and not self.has("topic"):
            raise usage("With --producer you must specify a --topic")
        if self.has("idempotent") and not self.has("producer"):
            raise usage("The --idempotent option is only available if --producer is set")
        if self.has("consumer") and (not self.has("topic") or not self.has("group") or (
                not self.has("producer") and (self.has("cluster") or self.has("transactional_id")))):
            raise usage("With --consumer you must specify a --topic and a --group and no --cluster or "
                        "--transactional-id option should be specified.")

    def _check_invalid(self, used: str, invalid: Sequence[str]) -> None:
        if not self.has(used):
            return
        for other in invalid:
            if self.has(other):
                raise click.UsageError(f"Option \"--{used.replace('_', '-')}\" can't be used with option "
                                       f"\"--{other.replace('_', '-')}\"")


def _principals(opts: AclCommandOptions, name: str) -> list[str]:
    out = []
    for text in opts.v.get(name) or ():
        try:
            principal = parse_kafka_principal(text.strip())
        except ValueError as e:
            raise AclCommandError(str(e)) from None
        if principal not in out:
            out.append(principal)
    return out


def _hosts(opts: AclCommandOptions, host_option: str, principal_option: str) -> list[str]:
    if opts.has(host_option):
        return list(dict.fromkeys(h.strip() for h in opts.v[host_option]))
    if opts.has(principal_option):
        return [acl_entry.WILDCARD_HOST]
    return []


def get_acls(principals: Sequence[str], permission_type: AclPermissionType, operations: Iterable[AclOperation],
             hosts: Sequence[str]) -> list[AccessControlEntry]:
    return [AccessControlEntry(p, h, op, permission_type) for p in principals for op in operations for h in hosts]


def _acls_for(opts: AclCommandOptions, operations: Iterable[AclOperation]) -> list[AccessControlEntry]:
    operations = list(operations)
    allowed_principals = _principals(opts, "allow_principal")
    denied_principals = _principals(opts, "deny_principal")
    allowed_hosts = _hosts(opts, "allow_host", "allow_principal")
    denied_hosts = _hosts(opts, "deny_host", "deny_principal")
    acls: list[AccessControlEntry] = []
    if allowed_hosts and allowed_principals:
        acls += get_acls(allowed_principals, AclPermissionType.ALLOW, operations, allowed_hosts)
    if denied_hosts and denied_principals:
        acls += get_acls(denied_principals, AclPermissionType.DENY, operations, denied_hosts)
    return list(dict.fromkeys(acls))


def _cli_operations(opts: AclCommandOptions) -> list[AclOperation]:
    operations = []
    for text in opts.v.get("operation") or ("All",):
        operation = AclOperation.from_name(text.strip())
        if operation is AclOperation.UNKNOWN:
            raise click.UsageError(f"Unknown operation {text.strip()}; valid operation names are: "
                                   + ", ".join(sorted(o.pascal_name for o in acl_entry.ACL_OPERATIONS)))
        operations.append(operation)
    return list(dict.fromkeys(operations))


def get_resource_filter(opts: AclCommandOptions, die_if_no_resource_found: bool = True) -> list[ResourcePatternFilter]:
    pattern_type = opts.pattern_type
    filters: list[ResourcePatternFilter] = []
    for topic in opts.v.get("topic") or ():
        filters.append(ResourcePatternFilter(ResourceType.TOPIC, topic.strip(), pattern_type))
    if pattern_type is PatternType.LITERAL and (opts.has("cluster") or opts.has("idempotent")):
        filters.append(CLUSTER_RESOURCE_FILTER)
    for group in opts.v.get("group") or ():
        filters.append(ResourcePatternFilter(ResourceType.GROUP, group.strip(), pattern_type))
    for transactional_id in opts.v.get("transactional_id") or ():
        filters.append(ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, transactional_id, pattern_type))
    for token in opts.v.get("delegation_token") or ():
        filters.append(ResourcePatternFilter(ResourceType.DELEGATION_TOKEN, token.strip(), pattern_type))
    filters = list(dict.fromkeys(filters))
    if not filters and die_if_no_resource_found:
        raise click.UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group "
                               "<group> or --delegation-token <Delegation Token ID>")
    return filters


def get_resource_filter_to_acls(opts: AclCommandOptions) -> dict[ResourcePatternFilter, list[AccessControlEntry]]:
    to_acls: dict[ResourcePatternFilter, list[AccessControlEntry]] = {}
    if not opts.has("producer") and not opts.has("consumer"):
        acls = _acls_for(opts, _cli_operations(opts))
        for f in get_resource_filter(opts):
            to_acls[f] = acls
    if opts.has("producer"):
        filters = get_resource_filter(opts)
        topic_acls = _acls_for(opts, (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE))
        txn_acls = _acls_for(opts, (AclOperation.WRITE, AclOperation.DESCRIBE))
        for f in filters:
            if f.resource_type is ResourceType.TOPIC:
                to_acls[f] = topic_acls
            elif f.resource_type is ResourceType.TRANSACTIONAL_ID:
                to_acls[f] = txn_acls
        if opts.has("idempotent"):
            to_acls[CLUSTER_RESOURCE_FILTER] = _acls_for(opts, (AclOperation.IDEMPOTENT_WRITE,))
    if opts.has("consumer"):
        filters = get_resource_filter(opts)
        topic_acls = _acls_for(opts, (AclOperation.READ, AclOperation.DESCRIBE))
        group_acls = _acls_for(opts, (AclOperation.READ,))
        for f in filters:
            if f.resource_type is ResourceType.TOPIC:
                to_acls[f] = list(dict.fromkeys(topic_acls + to_acls.get(f, [])))
            elif f.resource_type is ResourceType.GROUP:
                to_acls[f] = list(dict.fromkeys(group_acls + to_acls.get(f, [])))
    _validate_operation(to_acls)
    return to_acls


def _validate_operation(to_acls: Mapping[ResourcePatternFilter, Sequence[AccessControlEntry]]) -> None:
    for resource, acls in to_acls.items():
        valid = set(acl_entry.supported_operations(resource.resource_type)) | {AclOperation.ALL}
        if any(acl.operation not in valid for acl in acls):
            raise click.UsageError(f"ResourceType {resource.resource_type.name} only supports operations "
                                   + ",".join(o.name for o in sorted(valid, key=lambda o: o.code)))


def get_resource_to_acls(opts: AclCommandOptions) -> dict[ResourcePattern, list[AccessControlEntry]]:
    if not opts.pattern_type.is_specific:
        raise click.UsageError(f"A '--resource-pattern-type' value of '{opts.pattern_type.name}' is not valid when "
                               "adding acls.")
    to_acls = {ResourcePattern(f.resource_type, f.name, f.pattern_type): acls
               for f, acls in get_resource_filter_to_acls(opts).items()}
    if any(not acls for acls in to_acls.values()):
        raise click.UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add "
                               "ACLs.")
    return to_acls


def _confirm(opts: AclCommandOptions, message: str, out: Out) -> bool:
    if opts.has("force"):
        return True
    out(message)
    answer = sys.stdin.readline()
    return answer.strip().lower() == "y"


# ---------------------------------------------------------------------------- services


class AclCommandService:
    """What --add, --remove and --list do, over ``create``, ``delete`` and ``describe``."""

    def __init__(self, opts: AclCommandOptions, out: Out) -> None:
        self.opts = opts
        self.out = out

    # the three primitives each service provides
    def create(self, bindings: list[AclBinding]) -> None:
        raise NotImplementedError

    def delete(self, filters: list[AclBindingFilter]) -> None:
        raise NotImplementedError

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def add_acls(self) -> None:
        for resource, acls in get_resource_to_acls(self.opts).items():
            self.out(f"Adding ACLs for resource `{resource}`: {NEWLINE} {_entries_text(acls)} {NEWLINE}")
            self.create([AclBinding(resource, acl) for acl in acls])
        self.list_acls()

    def remove_acls(self) -> None:
        for resource_filter, acls in get_resource_filter_to_acls(self.opts).items():
            if not acls:
                question = f"Are you sure you want to delete all ACLs for resource filter `{resource_filter}`? (y/n)"
                if _confirm(self.opts, question, self.out):
                    self.delete([AclBindingFilter(resource_filter, ANY_ENTRY_FILTER)])
            else:
                question = (f"Are you sure you want to remove ACLs: {NEWLINE} {_entries_text(acls)} {NEWLINE} from "
                            f"resource filter `{resource_filter}`? (y/n)")
                if _confirm(self.opts, question, self.out):
                    self.delete([AclBindingFilter(resource_filter, acl.to_filter()) for acl in acls])
        self.list_acls()

    def list_acls(self) -> None:
        filters = get_resource_filter(self.opts, die_if_no_resource_found=False)
        list_principals = _principals(self.opts, "principal")
        if not filters:
            bindings = self.describe(ANY_BINDING_FILTER)
        else:
            bindings = [b for f in filters for b in self.describe(AclBindingFilter(f, ANY_ENTRY_FILTER))]
        resource_to_acls: dict[ResourcePattern, list[AccessControlEntry]] = {}
        for binding in bindings:
            entries = resource_to_acls.setdefault(binding.pattern, [])
            if binding.entry not in entries:
                entries.append(binding.entry)
        if not list_principals:
            self._print_resource_acls(resource_to_acls)
            return
        for principal in list_principals:
            self.out(f"ACLs for principal `{principal}`")
            filtered = {r: [a for a in acls if a.principal == principal] for r, acls in resource_to_acls.items()}
            self._print_resource_acls({r: acls for r, acls in filtered.items() if acls})

    def _print_resource_acls(self, resource_to_acls: Mapping[ResourcePattern, Sequence[AccessControlEntry]]) -> None:
        for resource, acls in resource_to_acls.items():
            self.out(f"Current ACLs for resource `{resource}`: {NEWLINE} {_entries_text(acls)} {NEWLINE}")


class AdminClientService(AclCommandService):
    """Through a broker: CreateAcls, DeleteAcls and DescribeAcls."""

    def __init__(self, opts: AclCommandOptions, out: Out) -> None:
        super().__init__(opts, out)
        from kafka import KafkaAdminClient

        bootstrap = opts.v["bootstrap_server"]
        validate_bootstrap_servers(bootstrap)
        command_config = load_props(opts.v["command_config"]) if opts.has("command_config") else {}
        props = {"bootstrap.timeout.ms": str(DEFAULT_BOOTSTRAP_TIMEOUT_MS), **command_config,
                 "bootstrap.servers": bootstrap}
        configs = client_configs(props, KafkaAdminClient)
        configs.setdefault("client_id", "kafka-acls")
        self._configs = configs
        self._admin: Any = None

    @property
    def admin(self) -> Any:
        """The admin client, connected on first use (after the options have been checked)."""
        if self._admin is None:
            from kafka import KafkaAdminClient

            self._admin = connect(KafkaAdminClient, self._configs)
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()

    def create(self, bindings: list[AclBinding]) -> None:
        from kafka.protocol.admin import CreateAclsRequest

        creation = CreateAclsRequest.AclCreation
        request = CreateAclsRequest(creations=[
            creation(resource_type=b.pattern.resource_type.code, resource_name=b.pattern.name,
                     resource_pattern_type=b.pattern.pattern_type.code, principal=b.entry.principal,
                     host=b.entry.host, operation=b.entry.operation.code,
                     permission_type=b.entry.permission_type.code) for b in bindings])
        response = send_admin_request(self.admin, request)
        for result in response.results:
            if result.error_code:
                raise _broker_error(result.error_code, result.error_message)

    def delete(self, filters: list[AclBindingFilter]) -> None:
        from kafka.protocol.admin import DeleteAclsRequest

        request = DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
            resource_type_filter=f.pattern_filter.resource_type.code,
            resource_name_filter=f.pattern_filter.name,
            pattern_type_filter=f.pattern_filter.pattern_type.code,
            principal_filter=f.entry_filter.principal, host_filter=f.entry_filter.host,
            operation=f.entry_filter.operation.code, permission_type=f.entry_filter.permission_type.code)
            for f in filters])
        response = send_admin_request(self.admin, request)
        for result in response.filter_results:
            if result.error_code:
                raise _broker_error(result.error_code, result.error_message)
            for matching in result.matching_acls:
                if matching.error_code:
                    raise _broker_error(matching.error_code, matching.error_message)

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        from kafka.protocol.admin import DescribeAclsRequest

        pattern, entry = binding_filter.pattern_filter, binding_filter.entry_filter
        request = DescribeAclsRequest(
            resource_type_filter=pattern.resource_type.code, resource_name_filter=pattern.name,
            pattern_type_filter=pattern.pattern_type.code, principal_filter=entry.principal,
            host_filter=entry.host, operation=entry.operation.code, permission_type=entry.permission_type.code)
        response = send_admin_request(self.admin, request)
        if response.error_code:
            raise _broker_error(response.error_code, response.error_message)
        bindings = []
        for resource in response.resources:
            pattern_type = PatternType.from_code(getattr(resource, "pattern_type", PatternType.LITERAL.code))
            resource_pattern = ResourcePattern(ResourceType.from_code(resource.resource_type), resource.resource_name,
                                               pattern_type)
            for acl in resource.acls:
                bindings.append(AclBinding(resource_pattern, AccessControlEntry(
                    acl.principal, acl.host, AclOperation.from_code(acl.operation),
                    AclPermissionType.from_code(acl.permission_type))))
        return bindings


class AuthorizerService(AclCommandService):
    """Without a broker: the authorizer itself, on ZooKeeper (``--authorizer-properties``)."""

    def __init__(self, opts: AclCommandOptions, out: Out) -> None:
        super().__init__(opts, out)
        from kafka_py.core.security.authorizer import create_authorizer

        properties = parse_key_value_args(opts.v.get("authorizer_properties") or (), accept_missing_value=False)
        if "zookeeper.connect" not in properties:
            raise click.UsageError("--authorizer-properties must set zookeeper.connect")
        try:
            self.authorizer = create_authorizer(opts.v.get("authorizer") or DEFAULT_AUTHORIZER)
        except ValueError as e:
            raise AclCommandError(str(e)) from None
        self.authorizer.configure(properties)

    def close(self) -> None:
        self.authorizer.close()

    def create(self, bindings: list[AclBinding]) -> None:
        for result in self.authorizer.create_acls(None, bindings):
            if result.exception is not None:
                self.out(f"Error while adding ACLs: {result.exception}")

    def delete(self, filters: list[AclBindingFilter]) -> None:
        for result in self.authorizer.delete_acls(None, filters):
            if result.exception is not None:
                self.out(f"Error while removing ACLs: {result.exception}")
            for deleted in result.acl_binding_delete_results:
                if deleted.exception is not None:
                    self.out(f"Error while removing ACLs: {deleted.exception}")

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return list(self.authorizer.acls(binding_filter))


def _pattern_type(ctx: Any, param: Any, value: Optional[str]) -> PatternType:
    """PatternTypeConverter: any pattern type but UNKNOWN, case-insensitively."""
    text = (value or "LITERAL").strip().upper()
    pattern_type = PatternType.from_string(text)
    if pattern_type is PatternType.UNKNOWN:
        raise click.BadParameter(f"Unknown resource-pattern-type: {value}")
    return pattern_type


# ---------------------------------------------------------------------------- main

_OPERATION_HELP = ("Operation that is being allowed or denied. Valid operation names are: "
                   + ", ".join(o.pascal_name for o in sorted(acl_entry.ACL_OPERATIONS, key=lambda o: o.code))
                   + " (default: All)")


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
               help="This tool helps to manage acls on kafka.")
@click.option("--bootstrap-server", metavar="<server to connect to>",
              help="A list of host/port pairs to use for establishing the connection to the Kafka cluster.")
@click.option("--command-config", metavar="<command-config>",
              help="A property file containing configs to be passed to Admin Client.")
@click.option("--authorizer", metavar="<authorizer>",
              help="Fully qualified class name of the authorizer, defaults to kafka.security.authorizer.AclAuthorizer.")
@click.option("--authorizer-properties", multiple=True, metavar="<authorizer-properties>",
              help="Properties to configure the authorizer with when not going through a broker, e.g. "
                   "zookeeper.connect=localhost:2181")
@click.option("--topic", multiple=True, metavar="<topic>",
              help="topic to which ACLs should be added or removed. A value of * indicates ACL should apply to all "
                   "topics.")
@click.option("--cluster", is_flag=True, help="Add/Remove cluster ACLs.")
@click.option("--group", multiple=True, metavar="<group>",
              help="Consumer Group to which the ACLs should be added or removed. A value of * indicates the ACLs "
                   "should apply to all groups.")
@click.option("--transactional-id", multiple=True, metavar="<transactional-id>",
              help="The transactionalId to which ACLs should be added or removed. A value of * indicates the ACLs "
                   "should apply to all transactionalIds.")
@click.option("--idempotent", is_flag=True,
              help="Enable idempotence for the producer. This should be used in combination with the --producer "
                   "option.")
@click.option("--delegation-token", multiple=True, metavar="<delegation-token>",
              help="Delegation token to which ACLs should be added or removed.")
@click.option("--resource-pattern-type", callback=_pattern_type, default="LITERAL", metavar="<ANY|MATCH|LITERAL|PREFIXED>",
              help="The type of the resource pattern or pattern filter: literal or prefixed when adding; any or match "
                   "(every pattern that affects the named resources) when listing or removing. Default: LITERAL")
@click.option("--add", is_flag=True, help="Indicates you are trying to add ACLs.")
@click.option("--remove", is_flag=True, help="Indicates you are trying to remove ACLs.")
@click.option("--list", "list_", is_flag=True,
              help="List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to "
                   "specify a resource.")
@click.option("--operation", multiple=True, metavar="<operation>", help=_OPERATION_HELP)
@click.option("--allow-principal", multiple=True, metavar="<allow-principal>",
              help="principal is in principalType:name format. User:* is the wild card indicating all users.")
@click.option("--deny-principal", multiple=True, metavar="<deny-principal>",
              help="principal is in principalType:name format. Deny rules take precedence over allow rules.")
@click.option("--principal", multiple=True, metavar="<principal>",
              help="List ACLs for the specified principal (principalType:name); may be repeated.")
@click.option("--allow-host", multiple=True, metavar="<allow-host>",
              help="Host from which principals listed in --allow-principal will have access (default *).")
@click.option("--deny-host", multiple=True, metavar="<deny-host>",
              help="Host from which principals listed in --deny-principal will be denied access (default *).")
@click.option("--producer", is_flag=True,
              help="Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows "
                   "WRITE,DESCRIBE and CREATE on topic.")
@click.option("--consumer", is_flag=True,
              help="Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows "
                   "READ,DESCRIBE on topic and READ on group.")
@click.option("--force", is_flag=True, help="Assume Yes to all queries and do not prompt.")
@handle_errors("Error while executing ACL command: ")
def main(list_: bool, **kwargs: Any) -> None:
    opts = AclCommandOptions({**kwargs, "list": list_})
    opts.check_args()
    service: AclCommandService
    if opts.has("bootstrap_server"):
        service = AdminClientService(opts, click.echo)
    else:
        service = AuthorizerService(opts, click.echo)
    try:
        if opts.has("add"):
            service.add_acls()
        elif opts.has("remove"):
            service.remove_acls()
        else:
            service.list_acls()
    finally:
        service.close()


if __name__ == "__main__":
    run_tool(main, "kafka-acls.sh")
