// js_client.mjs -- the JavaScript client, @kubernetes/client-node (the version
// pinned in tests/e2e/js/package-lock.json), against a running lapis.
//
// Run by tests/e2e/js.sh:  node js_client.mjs MODULE_DIR KUBECONFIG
// MODULE_DIR holds the node_modules that `npm ci` made from tests/e2e/js/
// (outside the source tree, so the module is resolved from there).
// Prints TAP-like lines and a closing "js: N passed, N failed" line; exits 1
// if anything failed. LAPIS_TEST_SLOW scales the safety nets (never a
// measurement: they only keep a broken watch from hanging the test).
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [moduleDir, kubeconfig] = process.argv.slice(2);
const requireFrom = createRequire(`${resolve(moduleDir)}/`);
const k8s = await import(pathToFileURL(requireFrom.resolve('@kubernetes/client-node')).href);
const SAFETY_MS = 60000 * Number(process.env.LAPIS_TEST_SLOW || 1);

let passed = 0;
let failed = 0;

function check(desc, cond, detail) {
    if (cond) {
        passed++;
        console.log(`ok - ${desc}`);
    } else {
        failed++;
        console.log(`not ok - ${desc}`);
        if (detail !== undefined) {
            console.log(`#   ${String(detail).slice(0, 600).replace(/\n/g, '\n#   ')}`);
        }
    }
}

// step DESC FN: runs FN (async, returns true/false or [bool, detail]); an
// exception is a failure with its message shown.
async function step(desc, fn) {
    try {
        const r = await fn();
        if (Array.isArray(r)) check(desc, r[0], r[1]);
        else check(desc, r === true);
    } catch (e) {
        check(desc, false, e && e.stack ? e.stack : e);
    }
}

// The Status object of a failed call: client-node 1.x throws ApiException
// with the HTTP code in .code and the response text in .body.
async function statusOf(promise) {
    try {
        await promise;
    } catch (e) {
        if (!(e instanceof k8s.ApiException)) throw e;
        let body = e.body;
        if (typeof body === 'string') body = JSON.parse(body);
        return { code: e.code, status: body };
    }
    return { code: 200, status: null };
}

function isStatus(got, code, reason) {
    return [
        got.code === code &&
            got.status &&
            got.status.kind === 'Status' &&
            got.status.status === 'Failure' &&
            got.status.code === code &&
            got.status.reason === reason,
        JSON.stringify(got),
    ];
}

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

// Watches PATH with PARAMS; .result resolves with the events once
// DONE(events) says so, and rejects on an error or at the safety net.
async function watchUntil(kc, path, params, done) {
    const events = [];
    let controller;
    const result = new Promise((resolve, reject) => {
        const timer = setTimeout(
            () => reject(new Error(`watch ${path}: still waiting; got ${JSON.stringify(events)}`)),
            SAFETY_MS,
        );
        const finish = (fn, v) => {
            clearTimeout(timer);
            fn(v);
        };
        new k8s.Watch(kc)
            .watch(
                path,
                params,
                (type, obj) => {
                    events.push({ type, obj });
                    if (done(events)) finish(resolve, events);
                },
                (err) => finish(err ? reject : resolve, err || events),
            )
            .then((c) => {
                controller = c;
            }, reject);
    });
    return { result: result.finally(() => controller && controller.abort()) };
}

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const ns = 'js';
console.log(`# server ${kc.getCurrentCluster().server}`);

// --- health and version ---
await step('Health: readyz and livez', async () => {
    const health = new k8s.Health(kc);
    return (await health.readyz({})) && (await health.livez({}));
});
await step('VersionApi: the Kubernetes version lapis implements', async () => {
    const v = await kc.makeApiClient(k8s.VersionApi).getCode();
    return [
        v.major === '1' && /^\d+$/.test(v.minor) && v.gitVersion.startsWith(`v1.${v.minor}.`),
        JSON.stringify(v),
    ];
});

// --- namespaces ---
await step('create namespace', async () => {
    const created = await core.createNamespace({ body: { metadata: { name: ns, labels: { suite: 'js' } } } });
    const got = await core.readNamespace({ name: ns });
    return [created.metadata.uid === got.metadata.uid && got.status.phase === 'Active', JSON.stringify(got)];
});
await step('list namespaces with a label selector', async () => {
    const l = await core.listNamespace({ labelSelector: 'suite=js' });
    return [
        l.items.map((n) => n.metadata.name).join() === ns,
        JSON.stringify(l.items.map((n) => n.metadata.name)),
    ];
});
await step('merge-patch a namespace', async () => {
    const p = await core.patchNamespace(
        { name: ns, body: { metadata: { labels: { extra: 'yes' } } } },
        mergePatch,
    );
    return [
        p.metadata.labels.extra === 'yes' && p.metadata.labels.suite === 'js',
        JSON.stringify(p.metadata),
    ];
});

// --- configmaps: create, read, list, page ---
let c1;
await step('create configmap', async () => {
    c1 = await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'c1', labels: { app: 'js' } }, data: { k: 'v' } },
    });
    return [c1.metadata.resourceVersion && c1.metadata.uid && c1.data.k === 'v', JSON.stringify(c1)];
});
await step('read configmap', async () => {
    const got = await core.readNamespacedConfigMap({ name: 'c1', namespace: ns });
    return [
        got.data.k === 'v' && got.metadata.resourceVersion === c1.metadata.resourceVersion,
        JSON.stringify(got),
    ];
});
await step('create 7 more configmaps', async () => {
    for (let i = 0; i < 7; i++) {
        await core.createNamespacedConfigMap({
            namespace: ns,
            body: { metadata: { name: `p${i}` }, data: { i: `${i}` } },
        });
    }
    return true;
});
await step('list with limit and continue equals the full list', async () => {
    const names = [];
    let token;
    let pages = 0;
    do {
        const page = await core.listNamespacedConfigMap({ namespace: ns, limit: 3, _continue: token });
        names.push(...page.items.map((c) => c.metadata.name));
        token = page.metadata._continue;
        pages++;
        if (token && page.items.length !== 3) return [false, `short page before the end: ${names}`];
    } while (token && pages < 10);
    const full = (await core.listNamespacedConfigMap({ namespace: ns })).items.map((c) => c.metadata.name);
    return [
        pages === 3 && full.length === 8 && names.join() === full.join(),
        `pages ${pages}: ${names} vs ${full}`,
    ];
});
// a list over 128 KiB comes gzipped (node-fetch asks for gzip and
// inflates it); api.sh checks the encoding itself
await step('a list over 128 KiB (gzipped) reads whole', async () => {
    const gz = `${ns}-gz`;
    await core.createNamespace({ body: { metadata: { name: gz } } });
    for (let i = 0; i < 100; i++) {
        await core.createNamespacedConfigMap({
            namespace: gz,
            body: { metadata: { name: `gz${i}` }, data: { k: 'v'.repeat(1400) } },
        });
    }
    const items = (await core.listNamespacedConfigMap({ namespace: gz })).items;
    await core.deleteNamespace({ name: gz });
    return [
        items.length === 100 && items.every((c) => c.data.k.length === 1400),
        `${items.length} items`,
    ];
});
await step('list with a label selector', async () => {
    const l = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app=js' });
    const s = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'app notin (js)' });
    return [
        l.items.map((c) => c.metadata.name).join() === 'c1' && s.items.length === 7,
        `${l.items.map((c) => c.metadata.name)} / ${s.items.length}`,
    ];
});

// --- replace, patch, conflicts ---
let replaced;
await step('replace configmap', async () => {
    const got = await core.readNamespacedConfigMap({ name: 'c1', namespace: ns });
    got.data.k = 'v2';
    replaced = await core.replaceNamespacedConfigMap({ name: 'c1', namespace: ns, body: got });
    return [
        replaced.data.k === 'v2' && replaced.metadata.resourceVersion !== c1.metadata.resourceVersion,
        JSON.stringify(replaced),
    ];
});
await step('merge patch (setHeaderOptions Content-Type merge-patch+json)', async () => {
    const p = await core.patchNamespacedConfigMap(
        { name: 'c1', namespace: ns, body: { data: { m: '1' }, metadata: { labels: { patched: 'merge' } } } },
        mergePatch,
    );
    return [p.data.m === '1' && p.data.k === 'v2' && p.metadata.labels.app === 'js', JSON.stringify(p)];
});
await step('JSON patch (the default Content-Type)', async () => {
    const p = await core.patchNamespacedConfigMap({
        name: 'c1',
        namespace: ns,
        body: [
            { op: 'test', path: '/data/m', value: '1' },
            { op: 'add', path: '/data/j', value: '2' },
        ],
    });
    return [p.data.j === '2' && p.data.m === '1', JSON.stringify(p)];
});
await step('strategic merge patch', async () => {
    const p = await core.patchNamespacedConfigMap(
        { name: 'c1', namespace: ns, body: { data: { s: '3' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    return [p.data.s === '3' && p.data.j === '2', JSON.stringify(p)];
});
await step('server-side apply creates, then updates and prunes (fieldManager, apply-patch+yaml)', async () => {
    const ssa = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: ns }, data: { a: '1', b: '2' } };
    await core.patchNamespacedConfigMap({ name: 'ssa', namespace: ns, body, fieldManager: 'js-ssa' }, ssa);
    body.data = { a: '3' };
    const p = await core.patchNamespacedConfigMap({ name: 'ssa', namespace: ns, body, fieldManager: 'js-ssa' }, ssa);
    const mf = (p.metadata.managedFields || []).map((e) => `${e.manager}/${e.operation}`);
    await core.deleteNamespacedConfigMap({ name: 'ssa', namespace: ns }); // later steps count
    return [JSON.stringify(p.data) === '{"a":"3"}' && JSON.stringify(mf) === '["js-ssa/Apply"]', JSON.stringify(p)];
});
// Without the header, client-node sends its first content type, JSON patch:
// an object there is kube's 400 BadRequest.
await step('a merge patch body sent as JSON patch is a 400 BadRequest Status', async () => {
    return isStatus(
        await statusOf(
            core.patchNamespacedConfigMap({ name: 'c1', namespace: ns, body: { data: { x: 'y' } } }),
        ),
        400,
        'BadRequest',
    );
});
await step('stale resourceVersion replace is a 409 Conflict Status', async () => {
    const stale = { ...replaced, data: { k: 'stale' } };
    return isStatus(
        await statusOf(core.replaceNamespacedConfigMap({ name: 'c1', namespace: ns, body: stale })),
        409,
        'Conflict',
    );
});
await step('creating an existing name is a 409 AlreadyExists Status', async () => {
    return isStatus(
        await statusOf(core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'c1' } } })),
        409,
        'AlreadyExists',
    );
});
await step('reading a missing configmap is a 404 NotFound Status', async () => {
    const got = await statusOf(core.readNamespacedConfigMap({ name: 'nope', namespace: ns }));
    const r = isStatus(got, 404, 'NotFound');
    const d = got.status && got.status.details;
    return [r[0] && d && d.name === 'nope' && d.kind === 'configmaps', r[1]];
});
await step('a configmap in a missing namespace is a 404 Status', async () => {
    return isStatus(
        await statusOf(
            core.createNamespacedConfigMap({ namespace: 'no-such-ns', body: { metadata: { name: 'x' } } }),
        ),
        404,
        'NotFound',
    );
});
await step('an invalid name is a 422 Invalid Status', async () => {
    return isStatus(
        await statusOf(
            core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'Not_Valid' } } }),
        ),
        422,
        'Invalid',
    );
});

// --- watch ---
await step('watch sees ADDED, MODIFIED, DELETED', async () => {
    const rv = (await core.listNamespacedConfigMap({ namespace: ns })).metadata.resourceVersion;
    const w = await watchUntil(
        kc,
        `/api/v1/namespaces/${ns}/configmaps`,
        { resourceVersion: rv, allowWatchBookmarks: true },
        (evs) => evs.filter((e) => e.type !== 'BOOKMARK').length >= 3,
    );
    await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'w1' }, data: { a: '1' } },
    });
    await core.patchNamespacedConfigMap(
        { name: 'w1', namespace: ns, body: { data: { a: '2' } } },
        mergePatch,
    );
    await core.deleteNamespacedConfigMap({ name: 'w1', namespace: ns });
    const evs = (await w.result).filter((e) => e.type !== 'BOOKMARK');
    const seen = evs.map((e) => `${e.type}:${e.obj.metadata.name}:${e.obj.data && e.obj.data.a}`);
    const rvs = evs.map((e) => BigInt(e.obj.metadata.resourceVersion));
    return [
        seen.join() === 'ADDED:w1:1,MODIFIED:w1:2,DELETED:w1:2' &&
            rvs[0] > BigInt(rv) &&
            rvs[0] < rvs[1] &&
            rvs[1] < rvs[2],
        seen.join(),
    ];
});
await step('watch from "0" replays the current state as ADDED', async () => {
    const names = (await core.listNamespacedConfigMap({ namespace: ns })).items
        .map((c) => c.metadata.name)
        .sort();
    const w = await watchUntil(
        kc,
        `/api/v1/namespaces/${ns}/configmaps`,
        { resourceVersion: '0' },
        (evs) => evs.length >= names.length,
    );
    const got = (await w.result).map((e) => `${e.type}:${e.obj.metadata.name}`).sort();
    return [got.join() === names.map((n) => `ADDED:${n}`).join(), got.join()];
});

// An informer (list, then watch from the list's resourceVersion), as
// JavaScript controllers use it.
await step('informer sees add, update, delete', async () => {
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
        core.listNamespacedConfigMap({ namespace: ns }),
    );
    const seen = [];
    let listed = 0;
    let resolveDone;
    const done = new Promise((r) => {
        resolveDone = r;
    });
    const note = (verb) => (obj) => {
        if (obj.metadata.name !== 'i1') {
            if (verb === 'add') listed++;
            return;
        }
        seen.push(`${verb}:${obj.data.a}`);
        if (verb === 'delete') resolveDone();
    };
    informer.on('add', note('add'));
    informer.on('update', note('update'));
    informer.on('delete', note('delete'));
    let stopping = false; // stop() aborts the watch, which reports an error
    informer.on('error', (err) => stopping || seen.push(`error:${err}`));
    const timer = setTimeout(resolveDone, SAFETY_MS);
    await informer.start();
    await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'i1' }, data: { a: '1' } },
    });
    await core.patchNamespacedConfigMap(
        { name: 'i1', namespace: ns, body: { data: { a: '2' } } },
        mergePatch,
    );
    await core.deleteNamespacedConfigMap({ name: 'i1', namespace: ns });
    await done;
    clearTimeout(timer);
    stopping = true;
    await informer.stop();
    return [listed === 8 && seen.join() === 'add:1,update:2,delete:2', `listed ${listed}, ${seen}`];
});

// The generic KubernetesObjectApi finds resources through discovery.
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
await step('KubernetesObjectApi: create, read, patch, list, delete a configmap', async () => {
    const spec = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'o1', namespace: ns },
        data: { a: '1' },
    };
    const created = await objects.create(spec);
    const read = await objects.read({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'o1', namespace: ns },
    });
    const patched = await objects.patch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'o1', namespace: ns }, data: { b: '2' } },
        undefined,
        undefined,
        undefined,
        undefined,
        k8s.PatchStrategy.MergePatch,
    );
    const list = await objects.list(
        'v1',
        'ConfigMap',
        ns,
        undefined,
        undefined,
        undefined,
        'metadata.name=o1',
    );
    await objects.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'o1', namespace: ns } });
    const gone = await statusOf(core.readNamespacedConfigMap({ name: 'o1', namespace: ns }));
    return [
        created.metadata.uid === read.metadata.uid &&
            patched.data.a === '1' &&
            patched.data.b === '2' &&
            list.items.length === 1 &&
            gone.code === 404,
        JSON.stringify([created.metadata, patched.data, list.items.length, gone.code]),
    ];
});

// --- delete ---
await step('delete configmap, then it reads 404', async () => {
    const st = await core.deleteNamespacedConfigMap({ name: 'c1', namespace: ns });
    const got = await statusOf(core.readNamespacedConfigMap({ name: 'c1', namespace: ns }));
    return [st && got.code === 404, JSON.stringify(got)];
});

await step('delete a collection of configmaps by label', async () => {
    for (const name of ['d1', 'd2']) {
        await core.createNamespacedConfigMap({
            namespace: ns,
            body: { metadata: { name, labels: { batch: 'd' } } },
        });
    }
    await core.deleteCollectionNamespacedConfigMap({ namespace: ns, labelSelector: 'batch=d' });
    const left = await core.listNamespacedConfigMap({ namespace: ns });
    const names = left.items.map((c) => c.metadata.name);
    return [names.length === 7 && !names.includes('d1') && !names.includes('d2'), names.join()];
});

// --- custom resources ---
const group = 'stable.example.com';
const plural = 'crontabs';
const crdName = `${plural}.${group}`;
await step('create a CRD through ApiextensionsV1Api and wait until Established', async () => {
    const created = await ext.createCustomResourceDefinition({
        body: {
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name: crdName },
            spec: {
                group,
                scope: 'Namespaced',
                names: { plural, singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
                versions: [
                    {
                        name: 'v1',
                        served: true,
                        storage: true,
                        schema: {
                            openAPIV3Schema: {
                                type: 'object',
                                properties: {
                                    spec: {
                                        type: 'object',
                                        properties: {
                                            cronSpec: { type: 'string' },
                                            image: { type: 'string' },
                                            replicas: { type: 'integer' },
                                        },
                                    },
                                },
                            },
                        },
                    },
                ],
            },
        },
    });
    const established = (c) =>
        ((c && c.status && c.status.conditions) || []).some(
            (x) => x.type === 'Established' && x.status === 'True',
        );
    if (!established(created)) {
        // Wait as clients do: watch the CRD by name until the condition appears.
        const w = await watchUntil(
            kc,
            '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
            { fieldSelector: `metadata.name=${crdName}`, resourceVersion: created.metadata.resourceVersion },
            (evs) => evs.some((e) => established(e.obj)),
        );
        await w.result;
    }
    const got = await ext.readCustomResourceDefinition({ name: crdName });
    return [established(got), JSON.stringify(got.status)];
});
const crBase = { group, version: 'v1', namespace: ns, plural };
await step('create a custom resource through CustomObjectsApi', async () => {
    const cr = await custom.createNamespacedCustomObject({
        ...crBase,
        body: {
            apiVersion: `${group}/v1`,
            kind: 'CronTab',
            metadata: { name: 'ct1', labels: { tier: 'a' } },
            spec: { cronSpec: '* * * * */5', image: 'img', replicas: 1 },
        },
    });
    await custom.createNamespacedCustomObject({
        ...crBase,
        body: {
            apiVersion: `${group}/v1`,
            kind: 'CronTab',
            metadata: { name: 'ct2', labels: { tier: 'b' } },
            spec: {},
        },
    });
    return [cr.metadata.uid && cr.spec.replicas === 1 && cr.kind === 'CronTab', JSON.stringify(cr)];
});
await step('get the custom resource', async () => {
    const cr = await custom.getNamespacedCustomObject({ ...crBase, name: 'ct1' });
    return [cr.spec.cronSpec === '* * * * */5' && cr.metadata.name === 'ct1', JSON.stringify(cr)];
});
await step('list custom resources, all and by label', async () => {
    const all = await custom.listNamespacedCustomObject({ ...crBase });
    const sel = await custom.listNamespacedCustomObject({ ...crBase, labelSelector: 'tier=a' });
    const cluster = await custom.listClusterCustomObject({ group, version: 'v1', plural });
    return [
        all.kind === 'CronTabList' &&
            all.items.map((c) => c.metadata.name).join() === 'ct1,ct2' &&
            sel.items.map((c) => c.metadata.name).join() === 'ct1' &&
            cluster.items.length === 2,
        JSON.stringify([all.kind, all.items.length, sel.items.length, cluster.items.length]),
    ];
});
await step('merge-patch the custom resource', async () => {
    const cr = await custom.patchNamespacedCustomObject(
        { ...crBase, name: 'ct1', body: { spec: { replicas: 5 } } },
        mergePatch,
    );
    return [cr.spec.replicas === 5 && cr.spec.image === 'img', JSON.stringify(cr)];
});
await step('JSON-patch the custom resource (the default Content-Type)', async () => {
    const cr = await custom.patchNamespacedCustomObject({
        ...crBase,
        name: 'ct1',
        body: [{ op: 'replace', path: '/spec/image', value: 'img2' }],
    });
    return [cr.spec.image === 'img2' && cr.spec.replicas === 5, JSON.stringify(cr)];
});
await step('strategic merge patch on a custom resource is a 415 Status', async () => {
    return isStatus(
        await statusOf(
            custom.patchNamespacedCustomObject(
                { ...crBase, name: 'ct1', body: { spec: { replicas: 6 } } },
                k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
            ),
        ),
        415,
        'UnsupportedMediaType',
    );
});
await step('KubernetesObjectApi: create, read, delete a custom resource', async () => {
    const head = { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'ct3', namespace: ns } };
    await objects.create({ ...head, spec: { replicas: 3 } });
    const read = await objects.read(head);
    await objects.delete(head);
    const gone = await statusOf(custom.getNamespacedCustomObject({ ...crBase, name: 'ct3' }));
    return [read.spec.replicas === 3 && gone.code === 404, JSON.stringify([read, gone.code])];
});
await step('delete the custom resource, then it reads 404', async () => {
    await custom.deleteNamespacedCustomObject({ ...crBase, name: 'ct1' });
    return isStatus(
        await statusOf(custom.getNamespacedCustomObject({ ...crBase, name: 'ct1' })),
        404,
        'NotFound',
    );
});
await step('delete the CRD', async () => {
    await ext.deleteCustomResourceDefinition({ name: crdName });
    let left;
    try {
        left = await ext.readCustomResourceDefinition({ name: crdName });
    } catch (e) {
        if (e.code !== 404) throw e;
    }
    // Gone, or still there with a deletionTimestamp while its instances go.
    return [!left || !!left.metadata.deletionTimestamp, JSON.stringify(left && left.metadata)];
});

// --- events.k8s.io/v1: another version of core/v1 Events ---
await step('EventsV1Api: create, series merge patch, read back through CoreV1Api', async () => {
    const events = kc.makeApiClient(k8s.EventsV1Api);
    const made = await events.createNamespacedEvent({
        namespace: ns,
        body: {
            metadata: { name: 'ev1' },
            // MicroTime: six fractional digits (kube refuses a plain
            // Date's three with 400, and so does lapis)
            eventTime: new k8s.V1MicroTime(),
            reportingController: 'example.com/js',
            reportingInstance: 'js-1',
            action: 'Test',
            reason: 'Tested',
            regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'c1', namespace: ns },
            note: 'hello',
            type: 'Normal',
        },
    });
    const p = await events.patchNamespacedEvent(
        { name: 'ev1', namespace: ns, body: { series: { count: 2, lastObservedTime: new k8s.V1MicroTime() } } },
        mergePatch,
    );
    const c = await core.readNamespacedEvent({ name: 'ev1', namespace: ns });
    return [
        made.note === 'hello' && p.series.count === 2 && c.message === 'hello' &&
            c.reportingComponent === 'example.com/js' && c.involvedObject.name === 'c1',
        JSON.stringify([made, p, c]),
    ];
});

// --- kubectl auth's reviews, through the client's own APIs ---
await step('AuthorizationV1Api SelfSubjectAccessReview and AuthenticationV1Api SelfSubjectReview', async () => {
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const authn = kc.makeApiClient(k8s.AuthenticationV1Api);
    const ssar = await authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { namespace: ns, verb: 'create', resource: 'configmaps' } } },
    });
    const who = await authn.createSelfSubjectReview({ body: {} });
    return [
        ssar.status.allowed === true && who.status.userInfo.groups.includes('system:masters'),
        JSON.stringify([ssar, who]),
    ];
});

// --- kubectl create token's API: TokenRequest, then TokenReview ---
await step('CoreV1Api createNamespacedServiceAccountToken and AuthenticationV1Api TokenReview', async () => {
    const authn = kc.makeApiClient(k8s.AuthenticationV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'bot' } } });
    const tr = await core.createNamespacedServiceAccountToken({
        name: 'bot', namespace: ns, body: { spec: { audiences: ['js-aud'] } },
    });
    const rev = await authn.createTokenReview({
        body: { spec: { token: tr.status.token, audiences: ['js-aud'] } },
    });
    return [
        tr.spec.expirationSeconds === 3600 && rev.status.authenticated === true &&
            rev.status.user.username === `system:serviceaccount:${ns}:bot`,
        JSON.stringify([tr.spec, rev.status]),
    ];
});

// --- namespace delete ---
await step('delete namespace: Terminating or gone', async () => {
    await core.deleteNamespace({ name: ns });
    let phase;
    try {
        phase = (await core.readNamespace({ name: ns })).status.phase;
    } catch (e) {
        phase = e.code === 404 ? 'gone' : `error ${e.code}`;
    }
    return [phase === 'Terminating' || phase === 'gone', phase];
});

console.log(`js: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
