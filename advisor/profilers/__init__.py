"""The built-in profile kinds, one package each (neuron, ncu, rbln, torch).

They stand above the shared stages they build on (inputs, metrics, report); the registry that finds them
(`advisor.kinds`) stands below every stage, so a stage asks the registry for a kind and never imports one.
"""
