Feature: A step names a pod the cluster never makes
  Run by tests/manifests_real.rs: the step waits for the pod, within the
  scenario's patience, and then says which workload lacks it and how many
  pods it has.

  Scenario: The chart's deployment has two pods, the step names a third
    Given the HPA controller runs with:
      | flag                                  | value |
      | horizontal-pod-autoscaler-sync-period | 1s    |
    And the manifests in "cache.yaml"
    And the pods report:
      | pod     | memory      |
      | cache-2 | cache=512Mi |
