    token = _core.current_trio_token()
            username, password = prefix.split(':', 1)
        password = unquote(password)
                        result['username'] = config.get(server, 'username')
                                result[key] = config.get(server, key)
                    repository = config.get(server, 'repository')
                    'username': config.get(server, 'username'),
                    'password': config.get(server, 'password'),
            {"BlockIndex": idx, "BlockToken": b.block_token}
        resolver_rule_id = self._get_param("ResolverRuleId")
        name = self._get_param("Name")
        vpc_id = self._get_param("VPCId")
        creator_request_id = self._get_param("CreatorRequestId")
        security_group_ids = self._get_param("SecurityGroupIds")
        direction = self._get_param("Direction")
        ip_addresses = self._get_param("IpAddresses")
        tags = self._get_param("Tags", [])
        rule_type = self._get_param("RuleType")
        domain_name = self._get_param("DomainName")
        target_ips = self._get_param("TargetIps", [])
        resolver_endpoint_id = self._get_param("ResolverEndpointId")
        resolver_rule_association_id = self._get_param("ResolverRuleAssociationId")
        next_token = self._get_param("NextToken")
        max_results = self._get_param("MaxResults", 10)
                next_token,
                next_token=next_token,
        if next_token:
            response["NextToken"] = next_token
        filters = self._get_param("Filters")
        endpoints, next_token = self.route53resolver_backend.list_resolver_endpoints(
            filters, next_token=next_token, max_results=max_results
            (rules, next_token) = self.route53resolver_backend.list_resolver_rules(
                filters, next_token=next_token, max_results=max_results
        resource_arn = self._get_param("ResourceArn")
        max_results = self._get_param("MaxResults")
        tags, next_token = self.route53resolver_backend.list_tags_for_resource(
            resource_arn=resource_arn, next_token=next_token, max_results=max_results
        response = {"Tags": tags, "NextToken": next_token}
        tags = self._get_param("Tags")
        tag_keys = self._get_param("TagKeys")
        ip_address = self._get_param("IpAddress")
        resolver_query_log_config_id = self._get_param("ResolverQueryLogConfigId")
        resource_id = self._get_param("ResourceId")
        destination_arn = self._get_param("DestinationArn")
        resolver_query_log_config_association_id = self._get_param(
        configs, next_token = (
        associations, next_token = (
        validation = self._get_param("Validation")
        dnssec_configs, next_token = (
                    "basic", {"username": auth[0], "password": auth[1]}
        secret = secrets_backend.describe_secret(secret_name).to_dict()
        next_token = int(token or "0")
                return results, str(next_token + len(results))
            if dummy_token_tracker < next_token:
        Parameters max_results, permission_type, and next_token not yet implemented
        next_token: str | None = None,
        return self._get_values_nexttoken(result, max_results, next_token)
        values = values_list[next_token : next_token + max_results]
            str(next_token + max_results) if len(values) == max_results else None,
        self, name: str, next_token: str | None, max_results: int = 50
            return self._get_history_nexttoken(history, next_token, max_results)
        history_to_return = history[next_token : next_token + max_results]
            and len(history) > next_token + max_results
            new_next_token = next_token + max_results
            return history_to_return, str(new_next_token)
        key = key or rsa.generate_private_key(
        private_key = rsa.generate_private_key(
            "PrivateKey": private_key.private_bytes(
    "AWS::ApiGateway::ApiKey": "48205d4ffd7feba3",
    "AWS::AppSync::ApiKey": "3d104ea0be48564b",
    "AWS::CodeBuild::SourceCredential": "b84e190d9ebbbfe1",
    "AWS::IAM::AccessKey": "72c2d9dd90025459",
    "AWS::Location::APIKey": "600da347bb3f084e",
    "AWS::MSK::BatchScramSecret": "ff2b807a577495b0",
    "AWS::Route53GlobalResolver::AccessToken": "ebce066c0deb24b4",
    "AWS::SecretsManager::Secret": "c85175a4ebcce361",
                    token = Token.Name.Builtin.SchemeFunction
                token = Token.Name.Builtin.SchemeBuiltin
            username, password = get_auth_from_url(proxy)
                password=password,
        username, password = get_auth_from_url(proxy)
            headers["Proxy-Authorization"] = _basic_auth_str(username, password)
