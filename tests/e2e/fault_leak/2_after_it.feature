Feature: Scenarios of another file, after a scenario that made an API fail
  Each reads the custom metrics API, which must answer again.

  Scenario: two pods at 50 and 100 against an average of 60 scale to 3
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And the HPA "web" has condition "ScalingActive" "True" with reason "ValidMetricFound"

  Scenario: two pods at 60 against an average of 60 stay at 2
    Given a deployment "api" with 2 pods
    And an HPA "api" for deployment "api" with min 1 and max 10 replicas
    And the HPA "api" scales on pods metric "http_requests" with average value 60
    And the pods of "api" report "http_requests" of 60 and 60
    When the HPA controller syncs
    Then the deployment "api" is not rescaled
    And the HPA "api" has condition "ScalingActive" "True" with reason "ValidMetricFound"
