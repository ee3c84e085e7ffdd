"""Types and the agent-spec registry: messages, masking, option declarations, the `Policy` type and the resolver."""
