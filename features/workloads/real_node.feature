@real-node
Feature: Pods on a real node
  On a real cluster (kind, k3d, k3s) this scenario's pods run the pause
  image on the cluster's own node, with a real kubelet, instead of the
  harness's fake node: a smoke test that the controller scales real pods.
  Elsewhere it runs as any other scenario.

  Scenario: Real pods at 50 and 100 against an average value of 60 scale to 3
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And an event "SuccessfulRescale" with message "New size: 3; reason: pods metric http_requests above target" is recorded for the HPA "web"
