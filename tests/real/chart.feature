Feature: A chart's pods on a cluster that names its own
  Run by tests/manifests_real.rs against `hpa-harness sim --generated-pod-names`:
  the chart's Deployment gets pods `web-<hash>-<5>`, and the steps call
  them `web-0`, `web-1` in creation order.

  Scenario: A chart's memory HPA scales its deployment
    Given the manifests in "../../features/manifests/web-chart.yaml"
    And the pods report:
      | pod   | memory     |
      | web-0 | web=256Mi  |
      | web-1 | web=256Mi  |
    When the HPA controller syncs
    # 200% of the 80% target proposes 5; the default scale-up policy allows 4.
    Then the deployment "web" has 4 replicas
    And the HPA "web" reports memory utilization 200%
