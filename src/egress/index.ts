/**
 * Egress to declared hosts (docs/security.md#egress): the policy's parsing and checks, the ranges no
 * skill may reach, and the per-run gateway a run's forwarder talks to. The only way in.
 */
export { refusedRange } from "./address-ranges.js";
export {
  allowingPattern,
  coveredByPolicy,
  DEFAULT_PORTS,
  type HostPattern,
  MAX_DECLARED_HOSTS,
  type MappedAddress,
  parseHostMap,
  parseHostPattern,
} from "./egress-policy.js";
export {
  type EgressConnection,
  type EgressLimits,
  openRunGateway,
  parseProxyRequest,
  type RunGateway,
  type RunGatewayOptions,
} from "./egress-gateway.js";
