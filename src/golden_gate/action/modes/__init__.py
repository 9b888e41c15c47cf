"""One module per Action mode, each a function of (settings, context) returning the exit code;
`action.main.DISPATCH` maps the `mode` input to it. A new mode: a module here, its name in
`inputs.MODES` (and action.yml's description of `mode`), and an entry in `DISPATCH`."""
