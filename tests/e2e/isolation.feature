Feature: Scenarios on a shared real cluster do not see each other
  Each scenario runs in a namespace of its own unless it names one; events
  count only when they belong to the scenario's objects and time.

  Scenario: A first scenario rescales web in a namespace it names
    Given a namespace "shared"
    And a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 50 and 100
    When the HPA controller syncs
    Then the deployment "web" has 3 replicas
    And an event "SuccessfulRescale" is recorded for the HPA "web"

  Scenario: A second scenario's web in the same namespace is not rescaled
    Given a namespace "shared"
    And a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 60 and 60
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And no event "SuccessfulRescale" is recorded for the HPA "web"

  Scenario: A scenario that names no namespace gets its own
    Given a deployment "web" with 2 pods
    And an HPA "web" for deployment "web" with min 1 and max 10 replicas
    And the HPA "web" scales on pods metric "http_requests" with average value 60
    And the pods of "web" report "http_requests" of 60 and 60
    When the HPA controller syncs
    Then the deployment "web" is not rescaled
    And no event "SuccessfulRescale" is recorded for the HPA "web"
