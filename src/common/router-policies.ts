/** sglang_router.launch_router's --policy values that topologies launch and the simulated router serves. */
export const ROUTER_POLICIES = ['cache_aware', 'round_robin', 'random', 'power_of_two'] as const

export type RouterPolicy = (typeof ROUTER_POLICIES)[number]
