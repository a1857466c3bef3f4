Feature: The pods a real cluster creates in a scale-up report at once
  Run by tests/new_pods_real.rs against `hpa-harness sim --generated-pod-names`
  with its own fake metrics server (which learns the pods by watch) and a
  controller process playing the cluster's own, syncing every second on its
  own schedule. The new pods' values must be there when that controller next
  syncs, not from the next step on: else the new pod counts as missing, at
  0 on a scale-up, and the scale-up stops at 2.

  Scenario: A scale-up continues because the new pods' values are read at the next sync
    Given a deployment "web" with 1 pod
    And the pods of "web" report "http_requests" of 120
    And the new pods of "web" report "http_requests" of 120
    And an HPA "web" for deployment "web" with min 1 and max 4 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    # 1 pod at twice the target: 2; 2 pods at twice the target: 4.
    Then the deployment "web" has 4 replicas
