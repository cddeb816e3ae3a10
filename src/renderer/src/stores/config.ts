/**
 * Presets and the run config's field descriptions (Pinia setup store), fetched once per page:
 * what the New run form is generated from.
 */
import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { ConfigField, PresetInfo } from '../../../shared/api';
import { labClient } from '../api/client';

export const useConfigStore = defineStore('config', () => {
  const presets = ref<PresetInfo[]>([]);
  const fields = ref<ConfigField[]>([]);
  let loading: Promise<void> | null = null;

  function load(): Promise<void> {
    loading ??= (async () => {
      const api = labClient();
      [presets.value, fields.value] = await Promise.all([api.presets({}), api.configSchema({})]);
    })();
    return loading;
  }

  return { presets, fields, load };
});
