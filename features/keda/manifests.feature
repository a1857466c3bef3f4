Feature: ScaledObjects among applied manifests
  A ScaledObject in a chart's rendered manifests is taken as KEDA would take
  it: its HPA appears and scales the workload applied beside it.

  Scenario: a Prometheus trigger at 900 against a threshold of 100 reaches the maximum of 6 in two syncs
    Given the manifests in "worker.yaml"
    And the trigger "prometheus" of ScaledObject "consumer" reports 900
    When 30s pass
    Then the deployment "consumer" has 6 replicas
    And the HPA "keda-hpa-consumer" has condition "ScalingLimited" "True" with reason "TooManyReplicas"
    # Read at the second sync, over the 4 pods of then: 900 / 4.
    And the HPA "keda-hpa-consumer" reports "s0-prometheus" at 225
