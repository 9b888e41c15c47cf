"""The verdict cache carried from one workflow run to the next by the runner's cache service.

persistence (restore before, save after) → entries (keys, choosing the service, restore the
newest) → archive (the directory as one checked archive) and service (what a service must do)
with its two clients: service_v2 (Twirp, `ACTIONS_RESULTS_URL`) and service_v1 (REST,
`ACTIONS_CACHE_URL`: act, Gitea/Forgejo, older GHES). A new service: a `CacheService` subclass
and a branch in `entries.choose_service`.
"""
