Feature: A controller the harness does not drive
  With `--controller upstream` the harness neither starts nor syncs an HPA
  controller: the cluster's own one acts on its own schedule, and the steps
  wait for it. Only what stays true between its syncs is asserted here (a
  condition such as AbleToScale=SucceededRescale lasts one sync period).

  Scenario: Two pods at 50 and 100 against an average value of 60 scale to 3
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" wants 3 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"
    And an event "SuccessfulRescale" with message "New size: 3; reason: pods metric http_requests above target" is recorded for the HPA "web"
