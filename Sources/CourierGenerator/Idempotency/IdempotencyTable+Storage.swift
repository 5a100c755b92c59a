extension IdempotencyTable {
    /// Cloud Storage JSON API v1, as Google classes its methods: the retry-strategy page
    /// (cloud.google.com/storage/docs/retry-strategy) and the classes its client libraries test
    /// with the shared retry conformance cases (googleapis/conformance-tests,
    /// `storage/v1/retry_tests.json`, scenarios 1–4). The conditional preconditions are those the
    /// Python client's predicates check (`is_generation_specified`, `is_metageneration_specified`,
    /// `is_etag_in_data`). IDs are the Discovery document's (`storage.projects.hmacKeys.update`
    /// is the conformance file's `storage.hmacKey.update`).
    static let storageV1 = #"""
    {
      "api": "storage",
      "version": "v1",
      "source": "https://cloud.google.com/storage/docs/retry-strategy",
      "idempotent": [
        "storage.bucketAccessControls.get",
        "storage.bucketAccessControls.list",
        "storage.buckets.delete",
        "storage.buckets.get",
        "storage.buckets.getIamPolicy",
        "storage.buckets.insert",
        "storage.buckets.list",
        "storage.buckets.lockRetentionPolicy",
        "storage.buckets.testIamPermissions",
        "storage.defaultObjectAccessControls.get",
        "storage.defaultObjectAccessControls.list",
        "storage.projects.hmacKeys.delete",
        "storage.projects.hmacKeys.get",
        "storage.projects.hmacKeys.list",
        "storage.notifications.delete",
        "storage.notifications.get",
        "storage.notifications.list",
        "storage.objectAccessControls.get",
        "storage.objectAccessControls.list",
        "storage.objects.get",
        "storage.objects.list",
        "storage.projects.serviceAccount.get"
      ],
      "conditional": {
        "storage.buckets.patch": {"parameters": ["ifMetagenerationMatch"]},
        "storage.buckets.update": {"parameters": ["ifMetagenerationMatch"]},
        "storage.buckets.setIamPolicy": {"bodyFields": ["etag"]},
        "storage.projects.hmacKeys.update": {"bodyFields": ["etag"]},
        "storage.objects.compose": {"parameters": ["ifGenerationMatch"]},
        "storage.objects.copy": {"parameters": ["ifGenerationMatch"]},
        "storage.objects.rewrite": {"parameters": ["ifGenerationMatch"]},
        "storage.objects.insert": {"parameters": ["ifGenerationMatch"]},
        "storage.objects.delete": {"parameters": ["ifGenerationMatch", "generation"]},
        "storage.objects.patch": {"parameters": ["ifMetagenerationMatch"]},
        "storage.objects.update": {"parameters": ["ifMetagenerationMatch"]}
      },
      "nonIdempotent": [
        "storage.bucketAccessControls.delete",
        "storage.bucketAccessControls.insert",
        "storage.bucketAccessControls.patch",
        "storage.bucketAccessControls.update",
        "storage.defaultObjectAccessControls.delete",
        "storage.defaultObjectAccessControls.insert",
        "storage.defaultObjectAccessControls.patch",
        "storage.defaultObjectAccessControls.update",
        "storage.projects.hmacKeys.create",
        "storage.notifications.insert",
        "storage.objectAccessControls.delete",
        "storage.objectAccessControls.insert",
        "storage.objectAccessControls.patch",
        "storage.objectAccessControls.update"
      ]
    }
    """#
}
