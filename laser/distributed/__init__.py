"""Scale-out: line-range shards of big inputs and the stages of `laser mine` as shard tasks
over a work directory, resumable through manifests of finished shards, run in this process or
by Ray (the optional `ray` extra) on a local runtime or a cluster.

`shards`, `work`, `workdir`, `mine_tasks` and `mine_stages` never import Ray; `ray_runner` and
`ray_tasks` import it inside their functions only, so `import laser` and `laser --help` stay
free of it.
"""
