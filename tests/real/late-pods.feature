Feature: A chart's pods that a cluster creates late, under names of its own
  Run by tests/manifests_real.rs against `hpa-harness sim
  --generated-pod-names --pod-creation-delay 700ms`: the chart's Deployment
  `cache` gets its pods `cache-<hash>-<5>` a moment after it is applied, as a
  real deployment controller makes them. The steps call them `cache-0`,
  `cache-1` and wait for them.

  Scenario: Steps name a chart's pods before the cluster made them
    Given the manifests in "cache.yaml"
    And the pods report:
      | pod     | memory      |
      | cache-0 | cache=512Mi |
      | cache-1 | cache=512Mi |
    When the HPA controller syncs
    # 200% of the 100% target: 4 pods.
    Then the deployment "cache" has 4 replicas
    And the HPA "cache" reports memory utilization 200%
