"""The GitHub Action: `main` reads the inputs and runs the mode they name.

main (dispatch) → modes/ (one module a mode) → run (an Action run's evaluation), results
(writing results in the order that loses nothing), common (secrets, GitHub client, scope,
baseline) → inputs, context, scope, baseline, github, cache/ (the verdict cache carried
between workflow runs by the runner's cache service).
"""
