"""core/src/main/scala/kafka/security: the authorizer (``authorizer``); the server side of
authentication is clients code, in kafka_py.clients.common.security."""
