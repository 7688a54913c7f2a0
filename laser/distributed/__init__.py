"""Scale-out on Ray (the optional `ray` extra): line-range shards of big inputs, run by Ray
actors on a local runtime or a cluster, resumable through a manifest of finished shards.

`shards` and `work` never import Ray; `ray_runner` imports it inside its functions only, so
`import laser` and `laser --help` stay free of it.
"""
